//! Writes the seed corpora (`engine::fuzz_targets::seed_corpus`) as
//! `OUT/TARGET/seed-NAME`: `seeds SHARED_DIR REPO_DIR OUT`.
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [shared, repo, out] = args.as_slice() else {
        eprintln!("usage: seeds SHARED_DIR REPO_DIR OUT");
        return ExitCode::from(2);
    };
    let seeds = match engine::fuzz_targets::seed_corpus(shared, repo) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("seeds: {e}");
            return ExitCode::FAILURE;
        }
    };
    for s in &seeds {
        let dir = out.join(s.target);
        let path = dir.join(format!("seed-{}", s.name));
        if let Err(e) = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, &s.data))
        {
            eprintln!("seeds: {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    }
    println!("{} seeds in {}", seeds.len(), out.display());
    ExitCode::SUCCESS
}
