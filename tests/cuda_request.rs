//! No silent CPU fallback: every command that is asked for CUDA (a device
//! key, `useFP16 = true`, `engine train -cuda`) and cannot have it stops at
//! once with one clear error naming what asked and why, and a non-zero
//! exit code. On this project's test machines there is no GPU, so the
//! request is for device 0; on a machine with a GPU it is for device 99,
//! which must fail the same way ("out of range"). Also: each command's
//! start-up line names the device, precision and backend it runs on.

use std::path::PathBuf;
use std::process::{Command, Output};

use engine::nn::device::CudaAvailability;

fn model() -> PathBuf {
    let shared = engine::shared_data_dir().unwrap_or_else(|e| panic!("{e}"));
    shared.join("models/g170-b6c96-s175395328-d26788732.bin.gz")
}

fn engine(args: &[&str], stdin: &str) -> Output {
    engine_with_env(args, stdin, &[])
}

fn engine_with_env(args: &[&str], stdin: &str, env: &[(&str, &str)]) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(args)
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start engine");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().expect("engine output")
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cuda-request-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The device index to ask for (one that cannot work here) and what the
/// error must say.
fn request() -> (usize, &'static str) {
    if CudaAvailability::probe().usable() {
        (99, "but only")
    } else if CudaAvailability::probe().built {
        (0, "but no CUDA device is visible")
    } else {
        (
            0,
            "but the libtorch this binary runs with has no CUDA support",
        )
    }
}

/// Fails unless the command stopped with one clear CUDA error.
fn assert_cuda_error(what: &str, out: &Output, asked_by: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "{what}: exit code 0 although CUDA cannot be used; stderr:\n{stderr}"
    );
    let (_, why) = request();
    let line = stderr
        .lines()
        .find(|l| l.contains(&format!("{asked_by} asks for CUDA")))
        .unwrap_or_else(|| panic!("{what}: no '{asked_by} asks for CUDA' in stderr:\n{stderr}"));
    assert!(line.contains(why), "{what}: '{why}' missing in: {line}");
    assert!(
        !stderr.contains("panicked"),
        "{what}: a panic instead of an error:\n{stderr}"
    );
    // Nothing ran on the CPU instead.
    assert!(
        !stderr.contains("Rust backend") && !stderr.contains("on CPU"),
        "{what}: ran on the CPU:\n{stderr}"
    );
}

#[test]
fn gtp_analysis_and_benchmark_refuse_missing_cuda() {
    let (idx, _) = request();
    let m = model();
    let m = m.to_str().unwrap();
    let dev = format!("deviceToUse={idx}");
    let out = engine(&["gtp", "-model", m, "-override-config", &dev], "quit\n");
    assert_cuda_error("gtp deviceToUse", &out, "deviceToUse");
    assert_eq!(out.status.code(), Some(1));

    let per_thread = format!("numNNServerThreadsPerModel=2,cudaDeviceToUseThread1={idx}");
    let out = engine(
        &["gtp", "-model", m, "-override-config", &per_thread],
        "quit\n",
    );
    assert_cuda_error("gtp cudaDeviceToUseThread1", &out, "cudaDeviceToUseThread1");

    let out = engine(&["analysis", "-model", m, "-override-config", &dev], "");
    assert_cuda_error("analysis", &out, "deviceToUse");

    let cuda_dev = format!("cudaDeviceToUse={idx}");
    let out = engine(
        &[
            "benchmark",
            "-model",
            m,
            "-v",
            "10",
            "-t",
            "1",
            "-n",
            "1",
            "-override-config",
            &cuda_dev,
        ],
        "",
    );
    assert_cuda_error("benchmark", &out, "cudaDeviceToUse");

    let out = engine(
        &[
            "benchmark",
            "-nn",
            "-model",
            m,
            "-batch",
            "1",
            "-seconds",
            "0.1",
            "-override-config",
            &dev,
        ],
        "",
    );
    assert_cuda_error("benchmark -nn", &out, "deviceToUse");

    if !CudaAvailability::probe().usable() {
        // Half precision forced on asks for CUDA too (KataGo's CUDA keys).
        let out = engine(
            &["gtp", "-model", m, "-override-config", "useFP16=true"],
            "quit\n",
        );
        assert_cuda_error("gtp useFP16", &out, "useFP16 = true");
        let out = engine(
            &["gtp", "-model", m, "-override-config", "cudaUseFP16=true"],
            "quit\n",
        );
        assert_cuda_error("gtp cudaUseFP16", &out, "cudaUseFP16 = true");
    }
}

#[test]
fn selfplay_match_and_train_refuse_missing_cuda() {
    let (idx, why) = request();
    let m = model();
    let m = m.to_str().unwrap();
    let dev = format!("deviceToUse={idx}");
    let out_dir = tmp("selfplay");
    let out = engine(
        &[
            "selfplay",
            "-config",
            concat!(env!("CARGO_MANIFEST_DIR"), "/configs/selfplay.toml"),
            "-model",
            m,
            "-output-dir",
            out_dir.to_str().unwrap(),
            "-max-games-total",
            "1",
            "-override-config",
            &format!("{dev},numGameThreads=1"),
        ],
        "",
    );
    assert_cuda_error("selfplay", &out, "deviceToUse");

    let sgfs = tmp("match");
    let bot = format!("a={m},maxVisits=2");
    let bot2 = format!("b={m},maxVisits=1");
    let out = engine(
        &[
            "match",
            "-bot",
            &bot,
            "-bot",
            &bot2,
            "-games",
            "2",
            "-boardsize",
            "9",
            "-sgf-output-dir",
            sgfs.to_str().unwrap(),
            "-override-config",
            &dev,
        ],
        "",
    );
    assert_cuda_error("match", &out, "deviceToUse");

    // `engine train -cuda`: the device is settled before any data is read.
    let train = tmp("train");
    let out = engine(
        &[
            "train",
            "-traindir",
            train.join("t").to_str().unwrap(),
            "-latestdatadir",
            train.join("no-data").to_str().unwrap(),
            "-model-kind",
            "b2c16",
            "-cuda",
        ],
        "",
    );
    if CudaAvailability::probe().usable() {
        // -cuda takes device 0, which exists here: nothing to check.
        let _ = why;
    } else {
        assert_cuda_error("train -cuda", &out, "-cuda");
        assert_eq!(out.status.code(), Some(1));
    }
    for d in [out_dir, sgfs, train] {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// `nnPrecision = bf16` on the CPU: the Rust backend's bf16 kernel where
/// the CPU has AVX-512 BF16 (the start-up line says so); elsewhere
/// `nnCpuBackend = rust` is refused with the reason.
#[test]
fn bf16_on_the_cpu_runs_on_the_rust_backend_where_the_cpu_can() {
    if CudaAvailability::probe().usable() {
        return; // the lines below are the CPU's
    }
    let m = model();
    let m = m.to_str().unwrap();
    let args = [
        "gtp",
        "-model",
        m,
        "-override-config",
        "nnCpuBackend=rust,nnPrecision=bf16",
    ];
    let gtp = "boardsize 9\ngenmove b\nquit\n";
    let out = engine(&args, gtp);
    let err = String::from_utf8_lossy(&out.stderr);
    if engine::nn::cpu_info::bf16_kernels_run() {
        assert!(out.status.success(), "{err}");
        assert!(err.contains("(CPU, bf16, NHWC, Rust backend, "), "{err}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.lines().any(|l| l.starts_with("= ") && l.len() > 2),
            "{text}"
        );
    } else {
        eprintln!("this CPU lacks AVX-512 BF16: only the refusal is checked");
    }
    // Without the AVX-512 kernels (any CPU), refused with the reason.
    let out = engine_with_env(&args, gtp, &[("ENGINE_SIMD", "avx2")]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("nnPrecision = bf16 and this CPU lacks AVX-512 BF16"),
        "{err}"
    );
}

/// `nnPrecision = int8` on the CPU: the Rust backend's int8 convs where
/// the CPU has AVX-512 VNNI, or AVX-VNNI on the AVX2 path
/// (`ENGINE_SIMD=avx2`): the start-up line names the kernels, and it
/// plays; without either (`ENGINE_SIMD=portable`, any CPU), and with
/// `nnCpuBackend = libtorch`, refused with the reason.
#[test]
fn int8_on_the_cpu_runs_on_the_rust_backend_where_the_cpu_can() {
    use engine::nn::cpu_info::Int8Kernels;
    if CudaAvailability::probe().usable() {
        return; // the lines below are the CPU's
    }
    let m = model();
    let m = m.to_str().unwrap();
    let gtp = "boardsize 9\ngenmove b\nquit\n";
    let run = |overrides: &str, env: &[(&str, &str)]| {
        let args = ["gtp", "-model", m, "-override-config", overrides];
        let out = engine_with_env(&args, gtp, env);
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        (out, err)
    };
    for (kernels, simd) in [
        (Int8Kernels::Avx512Vnni, "avx512"),
        (Int8Kernels::AvxVnni, "avx2"),
    ] {
        if !kernels.runs_on_this_cpu() {
            eprintln!("this CPU lacks {}: not played", kernels.name());
            continue;
        }
        let (out, err) = run("nnPrecision=int8", &[("ENGINE_SIMD", simd)]);
        assert!(out.status.success(), "{err}");
        // g170 b6c96: every trunk conv, 94% of the multiply-adds.
        let line = format!(
            "(CPU, int8 ({} kernels, 94% of the multiply-adds), NHWC, Rust backend, ",
            kernels.name()
        );
        assert!(err.contains(&line), "{err}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.lines().any(|l| l.starts_with("= ") && l.len() > 2),
            "{text}"
        );
    }
    let (out, err) = run("nnPrecision=int8", &[("ENGINE_SIMD", "portable")]);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("nnPrecision = \"int8\" runs only on the Rust backend on a CPU with AVX-512 VNNI or AVX-VNNI, but this CPU lacks both (or ENGINE_SIMD turned them off)"),
        "{err}"
    );
    let (out, err) = run("nnPrecision=int8,nnCpuBackend=libtorch", &[]);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("but nnCpuBackend = \"libtorch\""), "{err}");
}

/// `nnPrecision = auto` on the CPU: bf16 where the Rust backend's bf16
/// kernels run and the trunk is wide (g170's 96 channels), else fp32 (never
/// int8: its 19x19 SPRT is undecided), and the start-up line says which and
/// why: the project's default net (32 channels) runs fp32 whatever the CPU
/// has; g170 without the AVX-512 kernels (`ENGINE_SIMD=avx2`) runs fp32,
/// naming int8 where the CPU has AVX-VNNI. A precision that is none of these
/// is refused naming `auto` among them.
#[test]
fn auto_precision_says_what_it_chose_and_why() {
    if CudaAvailability::probe().usable() {
        return; // the lines below are the CPU's
    }
    let m = model();
    let m = m.to_str().unwrap();
    let gtp = "boardsize 9\ngenmove b\nquit\n";
    let run = |precision: &str, env: &[(&str, &str)]| {
        let args = [
            "gtp",
            "-model",
            m,
            "-override-config",
            &format!("nnPrecision={precision}"),
        ];
        let out = engine_with_env(&args, gtp, env);
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        (out, err)
    };
    let bf16 = "(CPU, bf16 (nnPrecision = auto: AVX-512 BF16 here), NHWC, Rust backend, ";
    let fp32 =
        "(CPU, fp32 (nnPrecision = auto: no AVX-512 BF16 or VNNI kernels here), NHWC, Rust backend, ";
    let (out, err) = run("auto", &[]);
    assert!(out.status.success(), "{err}");
    let vnni_fp32 = "(CPU, fp32 (nnPrecision = auto: fp32; VNNI here, but int8 is not yet shown to cost no strength on 19x19 (nnPrecision = int8 runs it)), NHWC, Rust backend, ";
    let expected = if engine::nn::cpu_info::bf16_kernels_run() {
        bf16
    } else if engine::nn::cpu_info::int8_kernels_run() {
        vnni_fp32
    } else {
        fp32
    };
    assert!(err.contains(expected), "{err}");
    // Unset is auto on the CPU.
    let out = engine(&["gtp", "-model", m], gtp);
    let unset = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{unset}");
    assert!(unset.contains(expected), "{unset}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines().any(|l| l.starts_with("= ") && l.len() > 2),
        "{text}"
    );
    let avx_vnni = engine::nn::cpu_info::Int8Kernels::AvxVnni.runs_on_this_cpu();
    let (out, err) = run("Auto", &[("ENGINE_SIMD", "avx2")]);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(if avx_vnni { vnni_fp32 } else { fp32 }),
        "{err}"
    );
    // The default net (no -model): 32 channels.
    let out = engine(&["gtp", "-override-config", "nnPrecision=auto"], gtp);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{err}");
    let narrow = "(CPU, fp32 (nnPrecision = auto: fp32 for a trunk under 64 channels, which bf16 and int8 cost strength), ";
    assert!(err.contains(narrow), "{err}");
    let (out, err) = run("fp8", &[]);
    assert!(!out.status.success());
    assert!(
        err.contains("expected fp32, fp16, bf16, int8 or auto"),
        "{err}"
    );
}

/// Each command's start-up line says where the net runs (device,
/// precision, layout, backend), from one shared description.
#[test]
fn startup_lines_name_device_precision_and_backend() {
    if CudaAvailability::probe().usable() {
        return; // the lines below are the CPU's
    }
    let m = model();
    let m = m.to_str().unwrap();
    // With no nnPrecision the CPU runs auto's pick for g170 (96 channels).
    let cpu = if engine::nn::cpu_info::bf16_kernels_run() {
        "CPU, bf16 (nnPrecision = auto: AVX-512 BF16 here), NHWC, Rust backend, "
    } else if engine::nn::cpu_info::int8_kernels_run() {
        "CPU, fp32 (nnPrecision = auto: fp32; VNNI here, but int8 is not yet shown to cost no strength on 19x19 (nnPrecision = int8 runs it)), NHWC, Rust backend, "
    } else {
        "CPU, fp32 (nnPrecision = auto: no AVX-512 BF16 or VNNI kernels here), NHWC, Rust backend, "
    };
    let out = engine(&["gtp", "-model", m], "quit\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.lines()
            .any(|l| l.starts_with("Loaded model") && l.contains(cpu)),
        "{err}"
    );
    // useFP16 = false (KataGo's "no half precision") keeps fp32, as
    // nnPrecision = fp32 does.
    for pin in ["useFP16=false", "nnPrecision=fp32"] {
        let out = engine(&["gtp", "-model", m, "-override-config", pin], "quit\n");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.lines()
                .any(|l| l.starts_with("Loaded model")
                    && l.contains("(CPU, fp32, NHWC, Rust backend, ")),
            "{pin}: {err}"
        );
    }
    let out = engine(
        &[
            "gtp",
            "-model",
            m,
            "-override-config",
            "nnCpuBackend=libtorch,nnPrecision=bf16",
        ],
        "quit\n",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("(CPU, bf16, NHWC, libtorch, 1 server thread"),
        "{err}"
    );
    let out = engine(&["analysis", "-model", m], "");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.lines()
            .any(|l| l.starts_with("engine analysis: model") && l.contains(cpu)),
        "{err}"
    );
    let out = engine(
        &[
            "benchmark",
            "-model",
            m,
            "-v",
            "2",
            "-t",
            "1",
            "-n",
            "1",
            "-boardsize",
            "9",
        ],
        "",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with("Network: ") && l.contains(cpu)),
        "{text}"
    );
    let train = tmp("train-line");
    let out = engine(
        &[
            "train",
            "-traindir",
            train.join("t").to_str().unwrap(),
            "-latestdatadir",
            train.join("no-data").to_str().unwrap(),
            "-model-kind",
            "b2c16",
            "-use-bf16",
        ],
        "",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("train: device CPU, bf16 trunk, fp32 heads (mixed precision), libtorch"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(train);
}
