//! The name of this self-play worker, which its data files carry so that
//! many workers can write into one store without clashing.

use super::layout::sanitize_worker_name;

/// The environment variable that names this self-play worker in its file
/// names (default: the Slurm job and array task, else `<host>-<pid>`).
pub const WORKER_NAME_ENV: &str = "ENGINE_WORKER_NAME";

/// This process's worker name (see [`WORKER_NAME_ENV`]), fit for file
/// names: a Slurm array task keeps its name when it is requeued.
pub fn worker_name() -> &'static str {
    static NAME: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    NAME.get_or_init(|| {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let raw = if let Some(name) = var(WORKER_NAME_ENV) {
            name
        } else if let Some(job) = var("SLURM_ARRAY_JOB_ID").or_else(|| var("SLURM_JOB_ID")) {
            let task = var("SLURM_ARRAY_TASK_ID").unwrap_or_else(|| "0".into());
            format!("slurm-{job}-{task}")
        } else {
            let host = nix::unistd::gethostname()
                .ok()
                .and_then(|h| h.into_string().ok())
                .unwrap_or_else(|| "host".into());
            let short = host.split('.').next().unwrap_or(&host).to_string();
            format!("{short}-{}", std::process::id())
        };
        sanitize_worker_name(&raw)
    })
}
