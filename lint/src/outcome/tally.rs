//! What a report's summary of places and workloads needs (the HTML
//! report's), counted as the findings stream by: per file (or namespace,
//! for `audit`) and for the worst few workloads, so the report keeps
//! counts, never the findings. Each document's are counted apart and added
//! up as its outcome joins the run's ([`Tally::absorb`]): a part of the
//! input linted again is then counted once, as its text is rendered once.

use std::collections::HashMap;

use policies::Severity;

use super::located::{Located, Origin};

/// How many workloads the summary lists, worst first.
pub(crate) const WORST: usize = 10;
/// How many files (or namespaces) the summary lists, worst first.
pub(crate) const PLACES: usize = 25;

/// Findings by severity: errors, warnings, info. Sorted greater is worse.
pub(crate) type Counts = [usize; 3];

fn slot(severity: Severity) -> usize {
    match severity {
        Severity::Error => 0,
        Severity::Warning => 1,
        Severity::Info => 2,
    }
}

/// The summary's counts.
#[derive(Debug, Default, Clone)]
pub(crate) struct Tally {
    /// Per file (or namespace), in the order first seen.
    places: Vec<(String, Counts)>,
    place_index: HashMap<String, usize>,
    /// The worst workloads so far (file or namespace, then `Kind/ns/name`), worst first.
    worst: Vec<(String, String, Counts)>,
    /// Whether the findings come from a cluster (places are namespaces).
    pub(crate) cluster: bool,
}

impl Tally {
    /// Counts one document's findings (an object's are all in its
    /// document). An object is told apart by where it starts, as two of a
    /// stream may share a name.
    pub(crate) fn document(&mut self, findings: &[Located]) {
        let mut objects: Vec<(String, String, Counts)> = Vec::new();
        let mut object_index: HashMap<(String, u32, u32, String), usize> = HashMap::new();
        for l in findings {
            let place = self.place_of(l);
            let mut one = Counts::default();
            one[slot(l.finding.severity)] += 1;
            self.add(place.clone(), one);
            let label = l.object();
            let key = (place, l.object_at.line, l.object_at.column, label);
            let k = match object_index.get(&key) {
                Some(&k) => k,
                None => {
                    object_index.insert(key.clone(), objects.len());
                    objects.push((key.0, key.3, Counts::default()));
                    objects.len() - 1
                }
            };
            if let Some((_, _, counts)) = objects.get_mut(k) {
                counts[slot(l.finding.severity)] += 1;
            }
        }
        for (place, object, counts) in objects {
            self.offer(place, object, counts);
        }
    }

    /// Adds the counts of a later part of the input.
    pub(crate) fn absorb(&mut self, part: Tally) {
        self.cluster |= part.cluster;
        for (place, counts) in part.places {
            self.add(place, counts);
        }
        for (place, object, counts) in part.worst {
            self.offer(place, object, counts);
        }
    }

    fn add(&mut self, place: String, counts: Counts) {
        match self.place_index.get(&place) {
            Some(&i) => {
                if let Some((_, mine)) = self.places.get_mut(i) {
                    for (m, n) in mine.iter_mut().zip(counts) {
                        *m += n;
                    }
                }
            }
            None => {
                self.place_index.insert(place.clone(), self.places.len());
                self.places.push((place, counts));
            }
        }
    }

    fn place_of(&mut self, l: &Located) -> String {
        if l.origin == Origin::Cluster {
            self.cluster = true;
            return l.namespace.as_deref().unwrap_or("(cluster-scoped)").to_owned();
        }
        l.file.to_string()
    }

    /// Keeps a workload when it is among the [`WORST`] (ties: the first seen).
    fn offer(&mut self, place: String, object: String, counts: Counts) {
        let at = self.worst.iter().position(|(_, _, c)| counts > *c).unwrap_or(self.worst.len());
        if at < WORST {
            self.worst.insert(at, (place, object, counts));
            self.worst.truncate(WORST);
        }
    }

    /// The worst workloads, worst first.
    pub(crate) fn worst(&self) -> &[(String, String, Counts)] {
        &self.worst
    }

    /// The files (or namespaces) with findings, worst first (ties: input order).
    pub(crate) fn places(&self) -> Vec<&(String, Counts)> {
        let mut places: Vec<&(String, Counts)> = self.places.iter().collect();
        places.sort_by_key(|p| std::cmp::Reverse(p.1));
        places
    }
}
