//! Embeds `policies/*.yaml` and `faults/*.yaml` in the binary, so presets and
//! fault scenarios work from any directory without a list kept by hand. The
//! table is read in one place, `src/input/embedded.rs`.

use std::fmt::Write as _;
use std::path::Path;
use std::{env, fs};

fn embed(dir: &str, out: &mut String, name: &str) {
    println!("cargo::rerun-if-changed={dir}");
    let mut files: Vec<_> = fs::read_dir(dir)
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "yaml"));
    files.sort();
    writeln!(out, "pub static {name}: &[(&str, &str)] = &[").unwrap();
    for path in files {
        let stem = path.file_stem().unwrap().to_string_lossy();
        let abs = fs::canonicalize(&path).unwrap();
        writeln!(out, "    ({stem:?}, include_str!({:?})),", abs.display()).unwrap();
    }
    writeln!(out, "];").unwrap();
}

fn main() {
    let mut out = String::new();
    embed("policies", &mut out, "POLICIES");
    embed("faults", &mut out, "FAULTS");
    let dest = Path::new(&env::var("OUT_DIR").unwrap()).join("embedded.rs");
    fs::write(dest, out).unwrap();
}
