//! Running a job, whichever engine runs it: how a run is watched, stopped and saved on
//! the way ([`control`]), when it ends before its limit ([`stops`]), the state it can go
//! on from ([`checkpoint`]), what it returns ([`result`]) and the host memory it may
//! take ([`memory`]).

pub mod archipelago;
pub mod checkpoint;
pub mod control;
pub mod generations;
pub mod memory;
pub mod polish;
pub mod result;
pub mod stops;
