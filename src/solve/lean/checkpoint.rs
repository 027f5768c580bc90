//! Checkpoints: where a layer's pass stands (the manifest and the nibbles' snapshot), saved
//! durably and bound to the files it names, and loaded to resume.
use super::chunks::{self, ChunkReader, ChunkWriter};
use super::nibbles::Nibbles;
use super::{clear_dir, exits, RunFile};
use crate::rules::Rules;
use crate::store::StoreError;
use std::path::Path;

/// Where a layer's pass stands, as saved in `checkpoint` in the scratch folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Checkpoint {
    pub(super) rules: Rules,
    pub(super) seeds: u32,
    /// Thresholds above this one are done; 0 when all are.
    pub(super) next_threshold: u32,
    /// The runs of each round of `next_threshold` done so far.
    pub(super) rounds: Vec<Vec<RunFile>>,
    /// Each finished threshold's run.
    pub(super) thresholds: Vec<(u32, String)>,
    /// The nibbles' snapshot.
    pub(super) nibbles: String,
    /// Whether the thresholds' runs have dropped their rounds (a layer built without its
    /// distances): such a checkpoint cannot finish a layer with distances.
    pub(super) rounds_dropped: bool,
    /// Each named file's [`chunks::digest`] when it was saved, which a resume checks: a
    /// file is bound to its place in the checkpoint, not only to its name.
    pub(super) digests: Vec<(String, u64)>,
    /// The files the checkpoint on disk names (not saved in it).
    pub(super) saved: Vec<String>,
    /// Files no longer needed that the checkpoint on disk still names: removed once the
    /// next one is saved (not saved in it).
    pub(super) stale: Vec<String>,
}

pub(super) const CHECKPOINT: &str = "checkpoint";
pub(super) const CHECKPOINT_MAGIC: &str = "awari lean checkpoint 3";

impl Checkpoint {
    /// A pass of layer `seeds` that starts at threshold `top`.
    pub(super) fn start(rules: Rules, seeds: u32, top: u32) -> Checkpoint {
        Checkpoint {
            rules,
            seeds,
            next_threshold: top,
            rounds: Vec::new(),
            thresholds: Vec::new(),
            nibbles: String::new(),
            rounds_dropped: false,
            digests: Vec::new(),
            saved: Vec::new(),
            stale: Vec::new(),
        }
    }

    /// A file is no longer needed: removed now, or after the next checkpoint if the one
    /// on disk names it.
    pub(super) fn discard(&mut self, dir: &Path, file: &str) {
        if self.saved.iter().any(|f| f == file) {
            self.stale.push(file.to_string());
        } else {
            let _ = std::fs::remove_file(dir.join(file));
        }
    }

    /// Bytes of the files no longer needed that wait for the next checkpoint.
    pub(super) fn stale_bytes(&self, dir: &Path) -> u64 {
        self.stale
            .iter()
            .filter_map(|f| std::fs::metadata(dir.join(f)).ok())
            .map(|m| m.len())
            .sum()
    }

    pub(super) fn encode(&self) -> String {
        let mut s = format!(
            "{CHECKPOINT_MAGIC}\nrules {}\nlayer {}\nnext-threshold {}\nnibbles {}\n",
            self.rules.name(),
            self.seeds,
            self.next_threshold,
            self.nibbles
        );
        if self.rounds_dropped {
            s += "rounds dropped\n";
        }
        for (t, f) in &self.thresholds {
            s += &format!("threshold {t} {f}\n");
        }
        for (r, files) in self.rounds.iter().enumerate() {
            s += &format!("round {r}\n");
            for f in files {
                s += &format!("run {} {}\n", f.entries, f.file);
            }
        }
        for (f, d) in &self.digests {
            s += &format!("file {d:016x} {f}\n");
        }
        let sum = xxhash_rust::xxh3::xxh3_64(s.as_bytes());
        s + &format!("sum {sum:016x}\n")
    }

    pub(super) fn decode(text: &str) -> Option<Checkpoint> {
        let body_end = text.rfind("sum ")?;
        let (body, tail) = text.split_at(body_end);
        let sum = u64::from_str_radix(tail.strip_prefix("sum ")?.trim(), 16).ok()?;
        if xxhash_rust::xxh3::xxh3_64(body.as_bytes()) != sum {
            return None;
        }
        let mut lines = body.lines();
        if lines.next()? != CHECKPOINT_MAGIC {
            return None;
        }
        let mut field = |name: &str| -> Option<String> {
            lines
                .next()?
                .strip_prefix(name)?
                .strip_prefix(' ')
                .map(str::to_string)
        };
        let rules: Rules = field("rules")?.parse().ok()?;
        let seeds = field("layer")?.parse().ok()?;
        let next_threshold = field("next-threshold")?.parse().ok()?;
        let nibbles = field("nibbles")?;
        let mut cp = Checkpoint {
            rules,
            seeds,
            next_threshold,
            rounds: Vec::new(),
            thresholds: Vec::new(),
            nibbles,
            rounds_dropped: false,
            digests: Vec::new(),
            saved: Vec::new(),
            stale: Vec::new(),
        };
        for line in lines {
            let words: Vec<&str> = line.split(' ').collect();
            match words.as_slice() {
                ["rounds", "dropped"] => cp.rounds_dropped = true,
                ["threshold", t, f] => cp.thresholds.push((t.parse().ok()?, f.to_string())),
                ["round", _] => cp.rounds.push(Vec::new()),
                ["run", entries, f] => cp.rounds.last_mut()?.push(RunFile {
                    file: f.to_string(),
                    entries: entries.parse().ok()?,
                }),
                ["file", d, f] => cp
                    .digests
                    .push((f.to_string(), u64::from_str_radix(d, 16).ok()?)),
                _ => return None,
            }
        }
        Some(cp)
    }

    /// Every file the checkpoint needs: itself, the nibbles, the exits files of the
    /// thresholds not done, the finished thresholds' runs and the current one's rounds.
    pub(super) fn files(&self) -> Vec<String> {
        let mut f = vec![CHECKPOINT.to_string(), self.nibbles.clone()];
        f.extend((1..=self.next_threshold).map(exits::exits_file));
        f.extend(self.thresholds.iter().map(|(_, f)| f.clone()));
        f.extend(self.rounds.iter().flatten().map(|r| r.file.clone()));
        f
    }

    /// The checkpoint in `dir`, if there is a valid one for this layer, whose pass starts
    /// at threshold `top`; every file it does not name is removed. A checkpoint that does
    /// not decode, or that names a missing file, is an error: the folder is not what this
    /// program left.
    pub(super) fn load(
        dir: &Path,
        rules: Rules,
        seeds: u32,
        top: u32,
    ) -> Result<Option<Checkpoint>, StoreError> {
        let path = dir.join(CHECKPOINT);
        let bytes = match std::fs::read(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(chunks::io_err(&path, e)),
        };
        let damaged = |what: &str| StoreError::Corrupted {
            path: path.clone(),
            what: format!("{what}; {}", super::remove_folder_advice(dir)),
        };
        // A flipped byte may leave the file not UTF-8: damage like any other, with its remedy.
        let text = String::from_utf8(bytes).map_err(|_| damaged("the checkpoint is not text"))?;
        let cp =
            Checkpoint::decode(&text).ok_or_else(|| damaged("the checkpoint does not decode"))?;
        // Named by what differs: a checkpoint of another preset is not "for another layer".
        if cp.rules != rules {
            return Err(damaged(&format!(
                "the checkpoint is for the rules '{}', not '{rules}'",
                cp.rules
            )));
        }
        if cp.seeds != seeds || cp.next_threshold > top {
            return Err(damaged("the checkpoint is for another layer"));
        }
        for f in cp.files() {
            if !dir.join(&f).is_file() {
                return Err(damaged(&format!("{f} is missing")));
            }
        }
        // Every file in its place: the one the checkpoint saved under that name, not
        // another threshold's, round's, layer's or rules preset's.
        let named: Vec<String> = cp.files().into_iter().filter(|f| f != CHECKPOINT).collect();
        if named.len() != cp.digests.len() || named.iter().any(|f| cp.digest_of(f).is_none()) {
            return Err(damaged(
                "the checkpoint does not record every file it names",
            ));
        }
        for f in named {
            let found = chunks::digest(&dir.join(&f)).ok();
            if found != cp.digest_of(&f) {
                return Err(damaged(&format!(
                    "{f} is not the file this checkpoint saved"
                )));
            }
        }
        let mut cp = cp;
        cp.saved = cp.files();
        clear_dir(dir, &cp.saved)?;
        Ok(Some(cp))
    }

    /// The digest recorded for `file`.
    pub(super) fn digest_of(&self, file: &str) -> Option<u64> {
        self.digests
            .iter()
            .find(|(f, _)| f == file)
            .map(|(_, d)| *d)
    }

    pub(super) fn load_nibbles(
        &self,
        dir: &Path,
        positions: u64,
        won_bits: bool,
    ) -> Result<Nibbles, StoreError> {
        let path = dir.join(&self.nibbles);
        let mut nib = Nibbles::new(positions, won_bits);
        let bytes = nib.as_bytes_mut();
        let mut reader = ChunkReader::open(&path)?;
        let mut at = 0usize;
        while let Some(chunk) = reader.next_chunk()? {
            let end = at + chunk.len();
            if end > bytes.len() {
                break;
            }
            bytes[at..end].copy_from_slice(&chunk);
            at = end;
        }
        if at != bytes.len() {
            return Err(StoreError::Corrupted {
                path,
                what: "the nibbles snapshot has the wrong size".into(),
            });
        }
        Ok(nib)
    }

    /// Saves the nibbles under a new name, then the checkpoint naming them (each synced,
    /// then renamed into place), then removes the snapshot it replaces.
    pub(super) fn save(&mut self, dir: &Path, nib: &mut Nibbles) -> Result<(), StoreError> {
        let name = format!(
            "nibbles-{:02}-{:04}.bin",
            self.next_threshold,
            self.rounds.len()
        );
        let old = std::mem::replace(&mut self.nibbles, name.clone());
        if old == name {
            // Saved at this very point already (a checkpoint after a round that settled
            // nothing): nothing changed.
            return Ok(());
        }
        let path = dir.join(&name);
        let mut w = ChunkWriter::create(&path)?;
        // Once every threshold is done the nibbles are of no more use: the snapshot is empty.
        let bytes: &[u8] = if self.next_threshold == 0 {
            &[]
        } else {
            nib.snapshot()
        };
        w.write_parallel(bytes, 1 << 20, chunks::as_is)?;
        w.finish()?;
        // Every file the checkpoint names is made durable before it is saved, and its
        // digest recorded (files are written once: a file already saved keeps its own).
        let named: Vec<String> = self
            .files()
            .into_iter()
            .filter(|f| f != CHECKPOINT)
            .collect();
        let mut digests = Vec::with_capacity(named.len());
        for f in named {
            let kept = self.digest_of(&f).filter(|_| self.saved.contains(&f));
            let digest = match kept {
                Some(d) => d,
                None => {
                    let path = dir.join(&f);
                    chunks::sync(&path)?;
                    chunks::digest(&path)?
                }
            };
            digests.push((f, digest));
        }
        self.digests = digests;
        let tmp = dir.join("checkpoint.tmp");
        let text = self.encode();
        let written = std::fs::File::create(&tmp).and_then(|mut f| {
            use std::io::Write;
            f.write_all(text.as_bytes())?;
            f.sync_all()
        });
        written.map_err(|e| chunks::io_err(&tmp, e))?;
        let target = dir.join(CHECKPOINT);
        std::fs::rename(&tmp, &target).map_err(|e| chunks::io_err(&target, e))?;
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
        if !old.is_empty() {
            let _ = std::fs::remove_file(dir.join(old));
        }
        for f in self.stale.drain(..) {
            let _ = std::fs::remove_file(dir.join(f));
        }
        self.saved = self.files();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index;
    use crate::solve::lean::runs;
    use crate::solve::settled::Settled;

    #[test]
    pub(super) fn checkpoints_round_trip_and_refuse_edits() {
        let mut cp = Checkpoint::start(Rules::AWARI, 12, 12);
        cp.next_threshold = 7;
        cp.nibbles = "nibbles-07-0002.bin".into();
        cp.thresholds.push((12, "threshold-12.run".into()));
        cp.rounds.push(vec![]);
        cp.rounds.push(vec![RunFile {
            file: "t07-r0001-00000.run".into(),
            entries: 42,
        }]);
        let text = cp.encode();
        assert_eq!(Checkpoint::decode(&text), Some(cp.clone()));
        let edited = text.replace("next-threshold 7", "next-threshold 6");
        assert_eq!(Checkpoint::decode(&edited), None);
        // A layer built without its distances says so, and an edit that drops the line
        // is refused.
        cp.rounds_dropped = true;
        let text = cp.encode();
        assert!(text.contains("\nrounds dropped\n"));
        assert_eq!(Checkpoint::decode(&text), Some(cp));
        assert_eq!(
            Checkpoint::decode(&text.replace("rounds dropped\n", "")),
            None
        );
    }

    /// A checkpoint saved with its files, then each way of putting another file in one's
    /// place: swapped thresholds, a copy of another threshold's run, another threshold's
    /// exits file, a file cut short. Each is refused on resume, naming the file; the
    /// untouched folder resumes.
    #[test]
    pub(super) fn a_checkpoint_refuses_files_that_are_not_its_own() {
        let run = |path: &Path, first: u64| {
            let n = 12;
            let entries: Vec<Settled> = (first..first + 50)
                .map(|i| Settled::new(&index::unrank(n, i * 7), i % 2 == 0))
                .collect();
            runs::write_run(path, &entries, 0).unwrap();
        };
        let saved = |dir: &Path| {
            for t in 1..=10 {
                run(&dir.join(exits::exits_file(t)), 1000 + 100 * u64::from(t));
            }
            run(&dir.join("threshold-12.run"), 0);
            run(&dir.join("threshold-11.run"), 100);
            run(&dir.join("t10-r0000-00000.run"), 200);
            let mut cp = Checkpoint::start(Rules::AWARI, 12, 12);
            cp.thresholds.push((12, "threshold-12.run".into()));
            cp.thresholds.push((11, "threshold-11.run".into()));
            cp.next_threshold = 10;
            cp.rounds.push(vec![RunFile {
                file: "t10-r0000-00000.run".into(),
                entries: 50,
            }]);
            let mut nib = Nibbles::new(1000, false);
            cp.save(dir, &mut nib).unwrap();
            cp
        };
        let root = tempfile::tempdir().unwrap();
        let good = root.path().join("good");
        std::fs::create_dir(&good).unwrap();
        let cp = saved(&good);
        let loaded = Checkpoint::load(&good, Rules::AWARI, 12, 12)
            .unwrap()
            .unwrap();
        assert_eq!(loaded.digests, cp.digests);
        assert_eq!(loaded.thresholds, cp.thresholds);
        // Another preset's checkpoint is named so, not "for another layer".
        let other = Checkpoint::load(&good, Rules::ABAPA, 12, 12)
            .unwrap_err()
            .to_string();
        assert!(
            other.contains("for the rules 'awari', not 'abapa'"),
            "{other}"
        );
        let other = Checkpoint::load(&good, Rules::AWARI, 13, 13)
            .unwrap_err()
            .to_string();
        assert!(other.contains("for another layer"), "{other}");

        type Damage = fn(&Path);
        let damages: [(&str, &str, Damage); 4] = [
            ("swapped thresholds", "threshold-1", |d| {
                let (a, b) = (d.join("threshold-12.run"), d.join("threshold-11.run"));
                std::fs::rename(&a, d.join("x")).unwrap();
                std::fs::rename(&b, &a).unwrap();
                std::fs::rename(d.join("x"), &b).unwrap();
            }),
            ("a copied run", "t10-r0000-00000.run", |d| {
                std::fs::copy(d.join("threshold-11.run"), d.join("t10-r0000-00000.run")).unwrap();
            }),
            ("another threshold's exits", "exits-07.run", |d| {
                std::fs::copy(d.join("exits-08.run"), d.join("exits-07.run")).unwrap();
            }),
            ("a file cut short", "threshold-11.run", |d| {
                let path = d.join("threshold-11.run");
                let bytes = std::fs::read(&path).unwrap();
                std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
            }),
        ];
        for (what, file, damage) in damages {
            let dir = root.path().join(what);
            std::fs::create_dir(&dir).unwrap();
            saved(&dir);
            damage(&dir);
            let err = Checkpoint::load(&dir, Rules::AWARI, 12, 12)
                .err()
                .unwrap_or_else(|| panic!("{what}: resumed into it"))
                .to_string();
            assert!(
                err.contains(file) && err.contains("not the file this checkpoint saved"),
                "{what}: {err}"
            );
        }
    }
}
