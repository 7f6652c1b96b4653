//! The segmentation steps from the command line. `lucent label`: the labels of an array file
//! equal scipy's numbering (the flood-fill reference, itself checked against scipy's printed
//! labels in `morphology`), on the GPU and the CPU reference; the regions' CSV equals the
//! library's measurements; bad outputs refused before anything is written. `lucent filter
//! --distance`: the exact distance transform, GPU and reference.

use crate::common::*;
use lucent::ndimage::{self, measurements, Regions};
use ndarray::{ArrayD, IxDyn};
use rand::Rng;

#[test]
fn label_command_matches_the_reference_and_measures_regions() {
    let dir = std::env::temp_dir().join(format!("lucent-cli-label-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let p = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let mut rng = rand::rng();
    // An intensity image of awkward shape; the foreground above 0.6.
    let x = ArrayD::from_shape_fn(IxDyn(&[13, 17, 11]), |_| rng.random::<f32>());
    lucent::io::write_real(p("x.npy"), &x.view()).unwrap();
    let mask = x.mapv(|v| v > 0.6);
    for connectivity in [1usize, 3] {
        let s = ndimage::generate_binary_structure(3, connectivity).unwrap();
        let (want, count) = ndimage::cpu::label(&mask.view(), &s.view()).unwrap();
        for device in ["gpu", "cpu"] {
            let c = connectivity.to_string();
            let report = lucent_json(
                &["--device", device, "label", &p("x.npy"), "-o", &p("l.npy"), "--threshold", "0.6", "--connectivity", &c, "--regions", &p("r.csv")],
                &[],
            );
            assert_eq!(report["details"]["regions"], count, "{device} connectivity {connectivity}");
            let header = std::fs::read(p("l.npy")).unwrap();
            assert!(String::from_utf8_lossy(&header[..128]).contains("'descr': '<i4'"), "int32 labels, as scipy's");
            let got = lucent::io::read_real(p("l.npy")).unwrap().mapv(|v| v as u32);
            assert_eq!(got, want, "{device} connectivity {connectivity}");
        }
        // The CSV: one row per region, its voxels, centre, box and the input's statistics.
        let csv = std::fs::read_to_string(p("r.csv")).unwrap();
        let rows: Vec<Vec<f64>> = csv.lines().skip(1).map(|l| l.split(',').map(|v| v.parse().unwrap()).collect()).collect();
        assert_eq!(rows.len(), count);
        let index: Vec<i64> = (1..=count as i64).collect();
        let regions = Regions::Each(want.view(), &index);
        let sums = measurements::sum_labels(&x.view(), &regions).unwrap();
        let boxes = measurements::find_objects(&want.view(), count).unwrap();
        for (i, row) in rows.iter().enumerate() {
            let voxels = want.iter().filter(|&&l| l as usize == i + 1).count() as f64;
            let b = boxes[i].as_ref().unwrap();
            assert_eq!((row[0], row[1]), ((i + 1) as f64, voxels));
            assert_eq!(&row[5..11], &[b[0].start, b[1].start, b[2].start, b[0].end, b[1].end, b[2].end].map(|v| v as f64));
            assert!((row[11] - sums[i]).abs() <= 1e-9 * sums[i].abs().max(1.0) && (row[12] - sums[i] / voxels).abs() < 1e-9);
            assert!(row[13] > 0.6 && row[13] <= row[14]);
        }
    }
    // Outputs that cannot hold labels, and impossible connectivities: refused, nothing written.
    for (args, says) in [
        (vec!["label", &p("x.npy") as &str, "-o", &p("l.png")], "labels are written to .npy"),
        (vec!["label", &p("x.npy"), "-o", &p("l2.npy"), "--connectivity", "4"], "connectivity 4 for a 3-axis input"),
        (vec!["label", &p("x.npy"), "-o", &p("l3.npy"), "--connectivity", "0"], "connectivity 0"),
    ] {
        let out = lucent_cli(&args, &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(says), "{args:?}: {err}");
    }
    assert!(!dir.join("l.png").exists() && !dir.join("l2.npy").exists() && !dir.join("l3.npy").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn distance_option_of_filter_matches_the_reference() {
    let dir = std::env::temp_dir().join(format!("lucent-cli-distance-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let p = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let mut rng = rand::rng();
    let x = ArrayD::from_shape_fn(IxDyn(&[9, 14, 11]), |_| if rng.random::<f64>() < 0.05 { 0.0f32 } else { 1.0 });
    lucent::io::write_real(p("m.npy"), &x.view()).unwrap();
    let want = ndimage::cpu::distance_transform_edt(&x.mapv(|v| v as f64).view(), &[2.0, 0.5, 0.7]).unwrap();
    for device in ["gpu", "cpu"] {
        lucent_json(&["--device", device, "filter", &p("m.npy"), "-o", &p("d.npy"), "--distance", "--sampling", "2,0.5,0.7"], &[]);
        let got = lucent::io::read_real(p("d.npy")).unwrap();
        assert_rel_l2(&got, &want, 1e-6, device);
    }
    let out = lucent_cli(&["filter", &p("m.npy"), "-o", &p("e.npy"), "--distance", "--sampling", "1,2"], &[]);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("sampling"), "{}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}
