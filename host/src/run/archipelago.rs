//! How a list of archipelagos is watched, stopped and saved on the way: one
//! [`IslandsWatch`] for the list, and the loop both engines run it through (groups of
//! archipelagos one after the other: on the CPU engine one archipelago per group, on
//! the GPU engine those that share launches).

use crate::cpu::islands::{Archipelago, ArchipelagoResult};
use crate::error::{Error, Result};
use crate::run::checkpoint::{ArchipelagoCheckpoint, ArchipelagoEntry};
use crate::run::control::{Flow, Observer};
use std::sync::atomic::{AtomicBool, Ordering};

/// Receives the state of every archipelago of the list, in order, every
/// [`IslandsWatch::every`] generations; [`Flow::Stop`] stops them there.
pub type IslandsSaver<'a> = &'a mut dyn FnMut(&[ArchipelagoEntry]) -> Flow;

/// How a list of archipelagos is watched, stopped and saved on the way.
/// `IslandsWatch::default()` does none of it.
#[derive(Default)]
pub struct IslandsWatch<'a> {
    /// For a list of one archipelago: sees the best value held over all islands after
    /// the generation it starts from and then after every generation (CPU engine) or
    /// every stretch of generations between two migration events or saves (GPU engine);
    /// [`Flow::Stop`] stops it there.
    pub observer: Option<Observer<'a>>,
    /// Polled before every generation (CPU engine) or stretch of generations (GPU
    /// engine): once set, the archipelagos stop there, and those not started stay so.
    pub stop: Option<&'a AtomicBool>,
    /// Give `save` the state of the list every this many generations (0: never), after
    /// that generation's migration event.
    pub every: u32,
    pub save: Option<IslandsSaver<'a>>,
    /// Keep the final state of the archipelagos that ended too (not only of those that
    /// were stopped), so that each comes back as [`ArchipelagoEntry::Started`]; else an
    /// archipelago that ended comes back as it was given (a rerun gives the same bits),
    /// and no engine copies its populations out.
    pub keep: bool,
}

/// What became of one archipelago of a list: its result (none when a stop came before
/// it started) and its entry (its state at the end, from which it can go on, when it
/// was stopped or [`IslandsWatch::keep`] asked for it; else as it was given).
#[derive(Clone, Debug)]
pub struct ArchipelagoRan {
    pub result: Option<ArchipelagoResult>,
    pub entry: ArchipelagoEntry,
}

/// Receives the states of a group of archipelagos, in the group's order.
pub(crate) type GroupSaver<'b> = &'b mut dyn FnMut(&[ArchipelagoCheckpoint]) -> Flow;

/// What an engine runs a group of archipelagos under.
pub(crate) struct GroupControl<'a, 'b> {
    pub observer: Option<Observer<'a>>,
    pub stop: Option<&'a AtomicBool>,
    pub every: u32,
    pub save: Option<GroupSaver<'b>>,
    /// Return the final state of every archipelago (else of those stopped only).
    pub keep: bool,
}

impl GroupControl<'_, '_> {
    /// Whether the stop flag is set.
    pub fn stopping(&self) -> bool {
        self.stop.is_some_and(|s| s.load(Ordering::Relaxed))
    }

    /// Whether a save is due after generation `g` of a run to `gmax`.
    pub fn due(&self, g: u32, gmax: u32) -> bool {
        self.save.is_some() && self.every > 0 && g.is_multiple_of(self.every) && g < gmax
    }
}

/// What a group's run returns: each archipelago's result and, when it was stopped or
/// [`GroupControl::keep`] asks, its final state.
pub(crate) type GroupRan = Vec<(ArchipelagoResult, Option<ArchipelagoCheckpoint>)>;

/// Runs `entries` in groups (`together(a, b)`: `b` runs in the group of `a`, the first
/// entry left), one group
/// after the other through `run`, under `watch`.
pub(crate) fn drive(
    entries: Vec<ArchipelagoEntry>,
    watch: &mut IslandsWatch,
    together: impl Fn(&ArchipelagoEntry, &ArchipelagoEntry) -> bool,
    mut run: impl FnMut(&[&ArchipelagoEntry], &mut GroupControl) -> Result<GroupRan>,
) -> Result<Vec<ArchipelagoRan>> {
    for e in &entries {
        if let ArchipelagoEntry::Started(c) = e {
            c.check()?;
        }
        if watch.save.is_some() {
            crate::run::checkpoint::savable(e.archipelago().template())?;
        }
    }
    let n = entries.len();
    let mut out: Vec<Option<ArchipelagoRan>> = vec![None; n];
    let mut left: Vec<usize> = (0..n).collect();
    let observer = if n == 1 { watch.observer } else { None };
    while let Some(&first) = left.first() {
        if watch.stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            break;
        }
        let group: Vec<usize> = left
            .iter()
            .copied()
            .filter(|&k| k == first || together(&entries[first], &entries[k]))
            .collect();
        left.retain(|k| !group.contains(k));
        let refs: Vec<&ArchipelagoEntry> = group.iter().map(|&k| &entries[k]).collect();
        let ran = {
            let done = &out;
            let all = &entries;
            let save = watch.save.as_mut();
            let mut whole = save.map(|save| {
                let group = &group;
                move |states: &[ArchipelagoCheckpoint]| {
                    let list: Vec<ArchipelagoEntry> = (0..n)
                        .map(|k| match group.iter().position(|&q| q == k) {
                            Some(i) => ArchipelagoEntry::Started(states[i].clone()),
                            None => match &done[k] {
                                Some(r) => r.entry.clone(),
                                None => all[k].clone(),
                            },
                        })
                        .collect();
                    save(&list)
                }
            });
            let mut control = GroupControl {
                observer,
                stop: watch.stop,
                every: watch.every,
                keep: watch.keep,
                save: whole
                    .as_mut()
                    .map(|f| f as &mut dyn FnMut(&[ArchipelagoCheckpoint]) -> Flow),
            };
            run(&refs, &mut control)?
        };
        for (k, (result, state)) in group.into_iter().zip(ran) {
            out[k] = Some(ArchipelagoRan {
                result: Some(result),
                entry: match state {
                    Some(c) => ArchipelagoEntry::Started(c),
                    None => entries[k].clone(),
                },
            });
        }
    }
    Ok(out
        .into_iter()
        .zip(entries)
        .map(|(r, e)| {
            r.unwrap_or(ArchipelagoRan {
                result: None,
                entry: e,
            })
        })
        .collect())
}

/// Runs `list` from their start to their ends through `run` (an engine's run of a list
/// of entries), the observer watching a list of one: one result each, in order.
pub(crate) fn run_to_end(
    list: &[Archipelago],
    observer: Option<Observer>,
    run: impl FnOnce(Vec<ArchipelagoEntry>, &mut IslandsWatch) -> Result<Vec<ArchipelagoRan>>,
) -> Result<Vec<ArchipelagoResult>> {
    let mut watch = IslandsWatch {
        observer,
        ..IslandsWatch::default()
    };
    let entries = list
        .iter()
        .cloned()
        .map(ArchipelagoEntry::Pending)
        .collect();
    run(entries, &mut watch)?
        .into_iter()
        .map(|r| {
            r.result.ok_or_else(|| {
                Error::invalid(
                    "archipelago",
                    "stopped",
                    "run to its end (nothing stops it)",
                )
            })
        })
        .collect()
}
