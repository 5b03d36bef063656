#![allow(dead_code)]

pub mod learn_config;
pub mod s3_server;
