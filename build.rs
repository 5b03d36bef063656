//! Link settings for libtorch: bake its library directory into the rpath so
//! that `engine` runs without `LD_LIBRARY_PATH`, and keep the CUDA part of
//! libtorch linked when the install has one.
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_TCH_LIBTORCH_LIB");
    let Ok(dir) = std::env::var("DEP_TCH_LIBTORCH_LIB") else {
        return;
    };
    if dir.is_empty() {
        return;
    }
    // --disable-new-dtags writes DT_RPATH, which is searched before the
    // system paths and also applies to libtorch's own dependencies.
    println!("cargo:rustc-link-arg=-Wl,--disable-new-dtags,-rpath,{dir}");
    // Nothing in the binary references libtorch_cuda's symbols directly (CUDA
    // kernels register themselves when the library loads), so the linker's
    // --as-needed would drop it and CUDA would never be found at run time.
    if Path::new(&dir).join("libtorch_cuda.so").exists() {
        println!("cargo:rustc-link-arg=-Wl,--no-as-needed,-ltorch_cuda,--as-needed");
    }
}
