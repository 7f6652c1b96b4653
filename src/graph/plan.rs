//! Buffer planning, GPU-free: which pooled buffer ("slot") each temporary lives in.
//! A slot returns to the pool after the last node that touches its value; the next temporary
//! takes the smallest free slot that fits, or a new one.

/// What the planner needs to know about one value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    External,
    /// Written by the host before the run starts, so it must not share a slot with anything
    /// used before it.
    Upload,
    Temp,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct ValueSpec {
    pub bytes: u64,
    pub kind: Kind,
    pub kept: bool,
}

#[derive(Debug, Default, PartialEq)]
pub(crate) struct Plan {
    /// Size of each slot in bytes.
    pub slots: Vec<u64>,
    /// Slot of each value (None for external arrays).
    pub slot_of: Vec<Option<usize>>,
    /// (node, value): temporaries handed out just before `node` (to poison in tests).
    pub acquired: Vec<(usize, usize)>,
}

impl Plan {
    pub fn total_bytes(&self) -> u64 {
        self.slots.iter().sum()
    }
}

/// Plans slots for `values` used by `nodes` (each node lists the values it binds), in order.
pub(crate) fn plan(values: &[ValueSpec], nodes: &[Vec<usize>]) -> Plan {
    let mut last_use = vec![None; values.len()];
    for (i, node) in nodes.iter().enumerate() {
        for &v in node {
            last_use[v] = Some(i);
        }
    }
    let mut p = Plan { slot_of: vec![None; values.len()], ..Default::default() };
    let mut free: Vec<usize> = Vec::new();
    let new_slot = |p: &mut Plan, bytes: u64| {
        p.slots.push(bytes);
        p.slots.len() - 1
    };
    for (i, node) in nodes.iter().enumerate() {
        for &v in node {
            let spec = values[v];
            if p.slot_of[v].is_some() || spec.kind == Kind::External {
                continue;
            }
            let reusable = spec.kind == Kind::Temp && !spec.kept;
            let fit = if reusable {
                free.iter().enumerate().filter(|(_, &s)| p.slots[s] >= spec.bytes).min_by_key(|(_, &s)| p.slots[s]).map(|(k, _)| k)
            } else {
                None
            };
            let slot = match fit {
                Some(k) => free.swap_remove(k),
                None => new_slot(&mut p, spec.bytes),
            };
            p.slot_of[v] = Some(slot);
            if spec.kind == Kind::Temp {
                p.acquired.push((i, v));
            }
        }
        // Release after the node: later nodes are ordered after it inside the pass.
        let mut released: Vec<usize> = node.clone();
        released.sort_unstable();
        released.dedup();
        for v in released {
            if last_use[v] == Some(i) && !values[v].kept && values[v].kind != Kind::External {
                free.push(p.slot_of[v].unwrap());
            }
        }
    }
    // Kept values that no node touches (an upload downloaded as is).
    for (v, spec) in values.iter().enumerate() {
        if p.slot_of[v].is_none() && spec.kind != Kind::External {
            p.slot_of[v] = Some(new_slot(&mut p, spec.bytes));
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(bytes: u64) -> ValueSpec {
        ValueSpec { bytes, kind: Kind::Temp, kept: false }
    }

    #[test]
    fn chain_reuses_two_slots() {
        // a -> b -> c -> d: each value dies once the next is written.
        let values = vec![temp(64); 4];
        let nodes = vec![vec![0], vec![0, 1], vec![1, 2], vec![2, 3]];
        let p = plan(&values, &nodes);
        assert_eq!(p.slots.len(), 2);
        assert_ne!(p.slot_of[0], p.slot_of[1]);
        assert_eq!(p.slot_of[0], p.slot_of[2]);
    }

    #[test]
    fn kept_and_uploads_are_not_shared_early() {
        let mut values = vec![temp(64); 3];
        values[1].kept = true;
        values.push(ValueSpec { bytes: 64, kind: Kind::Upload, kept: false });
        let nodes = vec![vec![0, 1], vec![1, 2], vec![3, 2]];
        let p = plan(&values, &nodes);
        // The upload (3) gets a fresh slot even though value 0's slot is free by then.
        let used_before: Vec<_> = [0, 1, 2].iter().map(|&v| p.slot_of[v]).collect();
        assert!(!used_before.contains(&p.slot_of[3]));
        // Value 2 may take value 0's slot, never value 1's (kept).
        assert_eq!(p.slot_of[2], p.slot_of[0]);
    }

    #[test]
    fn smallest_fitting_slot_is_taken() {
        let values = vec![temp(1000), temp(100), temp(90), temp(50)];
        let nodes = vec![vec![0, 1], vec![2], vec![3]];
        let p = plan(&values, &nodes);
        // 0 and 1 are free before 2 asks: 2 takes 1's slot (100 >= 90), not 0's.
        assert_eq!(p.slot_of[2], p.slot_of[1]);
    }

    #[test]
    fn external_values_have_no_slot() {
        let values = vec![ValueSpec { bytes: 64, kind: Kind::External, kept: false }, temp(64)];
        let p = plan(&values, &[vec![0, 1]]);
        assert_eq!(p.slot_of[0], None);
        assert_eq!(p.slots, vec![64]);
        assert_eq!(p.acquired, vec![(0, 1)]);
    }
}
