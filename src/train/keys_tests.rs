//! The key table ([`super::keys`]) against the trainable net and through
//! both directions.

use tch::Device;

use super::config::ModelConfig;
use super::keys::{key_table, Step, Transform};
use super::model::TrainNet;
use super::{export, import};

const KINDS: [&str; 4] = ["b1c6nbt", "b2c16", "b4c32-scalebias", "b2c16-initconv3"];

fn params(net: &TrainNet) -> export::NamedParams {
    net.params
        .iter()
        .map(|p| (p.name.clone(), p.tensor.shallow_clone()))
        .collect()
}

/// Every trainer key of the table names a parameter of the net.
#[test]
fn every_key_is_a_parameter_of_the_net() {
    for kind in KINDS {
        let config = ModelConfig::by_name(kind).expect("config");
        let net = TrainNet::new(&config, 19, Device::Cpu).expect("net");
        let has = |key: &str| net.params.iter().any(|p| p.name == key);
        let mut layers = 0;
        for step in key_table(&config) {
            let Step::Layer(e) = step else { continue };
            layers += 1;
            match &e.transform {
                Transform::Act => assert!(e.key.is_empty(), "{}", e.layer),
                Transform::Norm => assert!(has(&format!("{}.beta", e.key)), "{kind}: {}", e.key),
                Transform::ScoreValues { more, .. } => {
                    assert!(has(&e.key) && has(more), "{kind}: {}", e.key)
                }
                _ => assert!(has(&e.key), "{kind}: {}", e.key),
            }
        }
        assert!(layers > 20, "{kind}: {layers} layers");
    }
}

/// Export, import into a differently seeded net, export again: the same
/// bytes, nested bottleneck and scale-bias nets included.
#[test]
fn export_import_export_gives_the_same_file() {
    for kind in KINDS {
        let config = ModelConfig::by_name(kind).expect("config");
        tch::manual_seed(11);
        let first = TrainNet::new(&config, 19, Device::Cpu).expect("net");
        let file = export::to_model_file(&config, &params(&first), kind).expect("export");
        tch::manual_seed(12);
        let mut second = TrainNet::new(&config, 19, Device::Cpu).expect("net");
        let n = import::load_model_file(&mut second, &file).expect("import");
        assert!(n > 20, "{kind}: only {n} parameters set");
        let again = export::to_model_file(&config, &params(&second), kind).expect("export");
        assert_eq!(file.to_bytes(), again.to_bytes(), "{kind}");
    }
}
