#![allow(dead_code)]

pub mod s3_server;
