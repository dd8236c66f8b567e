//! What the tests of every crate share, in one place: the Deployments they
//! build ([`deployment`], [`applied`]), the AdmissionReviews they send
//! ([`review`]) and the real webhook process they send them to
//! ([`webhook`]). lint's and the webhook's tests and benches reach it as a
//! dev-dependency on this crate.

pub mod applied;
pub mod deployment;
pub mod layouts;
pub mod review;
pub mod webhook;
