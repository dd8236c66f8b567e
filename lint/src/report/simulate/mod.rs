//! `lifeguard simulate`'s renderers, one per format: the timelines and
//! verdicts of [`crate::simulate::read`]'s run as text (`text.rs`, and a
//! workload's steps in `workload.rs`), JSON (`json.rs`), SVG (`svg.rs`, a
//! workload's capacity chart in `capacity_svg.rs`) and one HTML page
//! (`html.rs`, which `audit`'s report reuses per object). They only format
//! what the engine simulated.

mod capacity_svg;
pub mod html;
pub mod json;
pub mod svg;
pub mod text;
pub mod workload;
