//! A broken libtorch install must fail the suite, not just the network tests.

// libtorch (and the trainer) are in the default build only.
#![cfg(feature = "torch")]

use tch::{Device, Kind, Tensor};

#[test]
fn libtorch_runs_a_tensor_op() {
    let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0]).reshape([2, 2]);
    let b = a.matmul(&a);
    let got: Vec<f32> = Vec::<f32>::try_from(b.reshape([-1])).expect("tensor to vec");
    assert_eq!(got, vec![7.0, 10.0, 15.0, 22.0]);
    assert_eq!(b.kind(), Kind::Float);
    assert_eq!(b.device(), Device::Cpu);
}
