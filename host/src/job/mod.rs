//! The job: what to minimise ([`objective`], [`problem`], the built-in functions in
//! [`functions`], the CEC 2017 suite's data in [`cec2017`], a user's PTX in
//! [`ptx_objective`]), how ([`config`]: the strategy and its settings, the stopping
//! rules and the seed; [`adaptive`]: the adaptive strategies' settings; [`names`]: the
//! settings' names; [`limits`]) and in which arithmetic ([`precision`]). Both engines
//! read it; it knows neither.

pub mod adaptive;
pub mod cec2017;
pub mod config;
pub mod functions;
pub mod limits;
pub mod names;
pub mod objective;
pub mod precision;
pub mod problem;
pub mod ptx_objective;
