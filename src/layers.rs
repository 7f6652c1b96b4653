//! The import rule, checked on the sources: each layer imports only from layers below it
//! (`error`/`check`/`host`/`phantom` ← `gpu` ← `graph` ← `placement` ← `kernels` ← `fft` ← `ops` ← the public namespaces
//! `signal`, `ndimage`, `restoration`, `registration`, `tomography`, `denoise` ← `io` ← the `lucent` binary).
//! `host` is the host machine's memory and files (budgets, atomic writes); `io`, the file formats,
//! sits above the engine, so an app built without the `io` feature loses no part of it.
//! `placement` (which errors send a call to a smaller form, the one progress type) sits below
//! `fft` and the ops, which both fall back from whole to chunked forms.
//! docs/ARCHITECTURE.md explains them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Top-level modules by layer, lowest first.
const LAYERS: &[&[&str]] = &[
    &["error", "check", "host", "phantom"],
    &["gpu"],
    &["graph"],
    &["placement"],
    &["kernels"],
    &["fft"],
    &["ops"],
    &["signal", "ndimage", "restoration", "registration", "tomography", "denoise", "psf", "engine"],
    &["io"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules a line names through `crate::` (`crate::a::b`, `crate::{a, b::c}`),
/// with names the crate root re-exports (`crate::Gpu`) resolved through `roots`.
fn crate_paths(line: &str, roots: &HashMap<String, String>) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        let names: Vec<&str> = match rest.strip_prefix('{') {
            Some(group) => group[..group.find('}').unwrap_or(group.len())].split(',').collect(),
            None => vec![rest],
        };
        for name in names {
            let name = name.trim();
            let end = name.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(name.len());
            let name = &name[..end];
            if let Some(module) = roots.get(name) {
                found.push(module.clone());
            } else if !name.is_empty() {
                found.push(name.to_string());
            }
        }
    }
    found
}

#[test]
fn modules_import_only_from_layers_below() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    // `pub use gpu::{Dtype, Gpu, ...};` in lib.rs: which module each root name comes from.
    let mut roots = HashMap::new();
    for line in std::fs::read_to_string(src.join("lib.rs")).unwrap().lines() {
        if let Some(rest) = line.strip_prefix("pub use ") {
            let (module, names) = rest.split_once("::").unwrap();
            for name in names.trim_matches(|c| "{};".contains(c)).split(',') {
                roots.insert(name.trim().to_string(), module.to_string());
            }
        }
    }
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut wrong = Vec::new();
    let mut checked = 0;
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
        let top = rel.components().next().unwrap().as_os_str().to_string_lossy();
        let top = top.trim_end_matches(".rs");
        if top == "bin" || top == "lib" || top == "layers" || top == "tests" {
            continue;
        }
        let Some(own) = layer_of(top) else {
            wrong.push(format!("src/{}: module `{top}` is in no layer (add it to LAYERS)", rel.display()));
            continue;
        };
        checked += 1;
        for (n, line) in std::fs::read_to_string(file).unwrap().lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for module in crate_paths(line, &roots) {
                match layer_of(&module) {
                    Some(l) if l <= own => {}
                    Some(_) => wrong.push(format!("src/{}:{}: `{top}` imports `{module}`, a layer above it", rel.display(), n + 1)),
                    None => wrong.push(format!("src/{}:{}: `crate::{module}` is in no layer", rel.display(), n + 1)),
                }
            }
        }
    }
    assert!(checked > 50, "found only {checked} source files under {}", src.display());
    assert!(wrong.is_empty(), "imports against the layers:\n{}", wrong.join("\n"));
}

#[test]
fn the_check_sees_grouped_and_root_imports() {
    let roots = HashMap::from([("Gpu".to_string(), "gpu".to_string())]);
    assert_eq!(crate_paths("use crate::{error::Result, ops::layout, Gpu};", &roots), ["error", "ops", "gpu"]);
    assert_eq!(crate_paths("let x = crate::fft::plan::smooth(crate::Gpu::new());", &roots), ["fft", "gpu"]);
}

/// The ops by layer, lowest first: an op imports only ops of layers below its own. `filter`
/// (scipy.ndimage) sits above `convolve` (scipy.signal) because it genuinely needs it: its
/// filters sum each output's window with the dispatch scipy.signal's direct method uses
/// (`convolve::window`, tiled or one thread per output), and normalised convolution is two
/// scipy.signal convolutions in 'same' mode (`KernelSpectrum`, `Method`). `denoise` sits below
/// the solvers: tomography's FISTA-TV takes its total-variation step (`denoise::tv`).
const OP_LAYERS: &[&[&str]] =
    &[&["layout", "reduce", "resident", "scan"], &["convolve", "interpolate", "psf"], &["filter"], &["denoise"], &["deconvolve", "registration", "tomography"]];

#[test]
fn ops_import_only_ops_below() {
    let ops = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ops");
    let layer = |op: &str| OP_LAYERS.iter().position(|l| l.contains(&op));
    let mut files = Vec::new();
    rust_files(&ops, &mut files);
    let mut wrong = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&ops).unwrap();
        if rel.components().count() < 2 {
            continue; // ops/mod.rs
        }
        let own = rel.components().next().unwrap().as_os_str().to_string_lossy().to_string();
        let Some(own_layer) = layer(&own) else {
            wrong.push(format!("src/ops/{own}: in no layer (add it to OP_LAYERS)"));
            continue;
        };
        for (n, line) in std::fs::read_to_string(file).unwrap().lines().enumerate() {
            let mut rest = line;
            while let Some(at) = rest.find("crate::ops::") {
                rest = &rest[at + "crate::ops::".len()..];
                let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
                let other = &rest[..end];
                match layer(other) {
                    Some(l) if l < own_layer || other == own => {}
                    _ => wrong.push(format!("src/ops/{}:{}: `{own}` imports the op `{other}`", rel.display(), n + 1)),
                }
            }
        }
    }
    assert!(wrong.is_empty(), "ops importing ops of their own layer or above:\n{}", wrong.join("\n"));
}

/// The CLI and the Python extension go through the front doors (the families, `io`, `engine`):
/// never the crate-private layers, which would make a second door to an operation.
#[test]
fn the_cli_and_python_call_only_the_front_doors() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src/bin"), &mut files);
    rust_files(&root.join("python/src"), &mut files);
    assert!(files.len() > 20, "found only {} files in src/bin and python/src", files.len());
    let mut wrong = Vec::new();
    for file in &files {
        for (n, line) in std::fs::read_to_string(file).unwrap().lines().enumerate() {
            for private in ["ops", "placement", "kernels", "graph", "gpu"] {
                if line.contains(&format!("lucent::{private}::")) || line.contains(&format!("lucent::{{{private}")) {
                    wrong.push(format!("{}:{}: names `lucent::{private}`", file.strip_prefix(root).unwrap().display(), n + 1));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "the CLI or Python past the front doors:\n{}", wrong.join("\n"));
}

/// Each kernel `shaders/<family>/<stem>.wgsl` has its wrapper `src/kernels/<stem>.rs`, and each
/// wrapper names a kernel or a shared snippet (`shaders/common/<stem>.wgsl`: the parameters or
/// the boundary modes several kernels share). The exceptions: each texture sampler is its buffer
/// kernel read through a texture binding (which an override cannot switch), recorded by the
/// buffer kernel's wrapper (`kernels::map_coordinates::specialised` picks either); Chambolle's TV
/// step with its stopping rule is the plain step with three more bindings, in its wrapper.
#[test]
fn each_kernel_has_one_wrapper_of_its_stem() {
    const SAME_WRAPPER: [(&str, &str); 5] = [
        ("affine_sample_texture", "affine_sample"),
        ("map_coordinates_texture", "map_coordinates"),
        ("project_rays_texture", "project_rays"),
        ("backproject_voxels_texture", "backproject_voxels"),
        ("tv_chambolle_stopping", "tv_chambolle"),
    ];
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (mut kernels, mut snippets) = (Vec::new(), Vec::new());
    for family in std::fs::read_dir(root.join("shaders")).unwrap() {
        let family = family.unwrap().path();
        if !family.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&family).unwrap() {
            let file = file.unwrap().path();
            if file.extension().is_some_and(|e| e == "wgsl") {
                let stem = file.file_stem().unwrap().to_string_lossy().to_string();
                if family.ends_with("common") {
                    snippets.push(stem)
                } else {
                    kernels.push(stem)
                }
            }
        }
    }
    assert!(kernels.len() > 40, "found only {} kernels under shaders/", kernels.len());
    let wrappers: Vec<String> = std::fs::read_dir(root.join("src/kernels"))
        .unwrap()
        .map(|f| f.unwrap().path().file_stem().unwrap().to_string_lossy().to_string())
        .filter(|s| s != "mod")
        .collect();
    let mut wrong = Vec::new();
    for k in &kernels {
        let wrapper = SAME_WRAPPER.iter().find(|(t, _)| t == k).map_or(k.as_str(), |(_, w)| w);
        if !wrappers.iter().any(|w| w == wrapper) {
            wrong.push(format!("shaders/**/{k}.wgsl has no src/kernels/{wrapper}.rs"));
        }
    }
    for w in &wrappers {
        if !kernels.contains(w) && !snippets.contains(w) {
            wrong.push(format!("src/kernels/{w}.rs wraps no shaders/**/{w}.wgsl"));
        }
    }
    assert!(wrong.is_empty(), "kernels and wrappers apart:\n{}", wrong.join("\n"));
}
