pub mod yaml;
