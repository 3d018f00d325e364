//! Build script: link options of the `mem` binary.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let target = std::env::var("TARGET").unwrap_or_default();
    // Every command starts a process: with its ~51,000 relative relocations packed (DT_RELR),
    // the dynamic loader applies them in less time (`mem --version` 4.7 -> 3.8 ms, whole-process
    // recall about 1.5 ms less; docs/benchmarks.md). The executable stays position-independent.
    // The binary then requires GLIBC_ABI_DT_RELR: a C library without DT_RELR (glibc < 2.36)
    // refuses to load it with that name, instead of running it wrong.
    if target.ends_with("-linux-gnu") {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
