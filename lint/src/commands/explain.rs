//! `lifeguard explain RULE`: a rule's documentation, or with `simulate`
//! the simulation's kubelet model.

use anyhow::Result;

use crate::options::{SIMULATE_TOPIC, unknown_rule};
use crate::output::write_stdout;
use crate::stop::Stop;

/// Prints the topic's text; returns the exit code (2 with no topic, or an
/// unknown one, with the topics named).
pub fn run(topic: Option<&str>) -> Result<u8> {
    let Some(topic) = topic else {
        return Err(Stop::usage(
            "explain needs a rule, e.g. `lifeguard explain probe-endpoint-reused` \
             (`lifeguard rules` lists them all), or `simulate` for the simulation's kubelet model",
        ));
    };
    if topic == SIMULATE_TOPIC {
        write_stdout(policies::simulate::MODEL)?;
        return Ok(0);
    }
    match policies::rules::find(topic) {
        Some(r) => {
            write_stdout(&crate::report::rules::explain(r))?;
            Ok(0)
        }
        None => {
            let mut known: Vec<&str> = policies::rules::RULES.iter().map(|r| r.name).collect();
            known.push(SIMULATE_TOPIC);
            Err(Stop::usage(unknown_rule(topic, &known)))
        }
    }
}
