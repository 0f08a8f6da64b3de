//! Flags more than one command takes: the runtime guard (`--max-events` ...), fencing, and
//! the worker pool `--jobs` sizes.

use clap::Args;

/// `run --fencing`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

impl OnOff {
    /// The flag as a replay command writes it: `--fencing on`.
    pub fn fencing_flag(self) -> &'static str {
        match self {
            OnOff::On => "--fencing on",
            OnOff::Off => "--fencing off",
        }
    }
}

/// `compare --fencing` and `sweep --fencing`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FencingMode {
    /// The scenario's `resource.fencing`.
    Scenario,
    On,
    Off,
    Both,
}

impl FencingMode {
    /// `--fencing MODE` as a command line writes it, nothing for the default.
    pub fn flag_words(self) -> Vec<String> {
        let word = match self {
            FencingMode::Scenario => return Vec::new(),
            FencingMode::On => "on",
            FencingMode::Off => "off",
            FencingMode::Both => "both",
        };
        vec!["--fencing".to_string(), word.to_string()]
    }
}

/// `--max-events`, `--max-in-flight`, `--max-memory`, `--max-node-in-flight`, `--max-time`: the
/// runtime guard of every run a command makes (docs/scenario-format.md, "The runtime guard").
#[derive(Args, Debug, Clone, Copy)]
#[command(next_help_heading = "Run limits")]
pub struct LimitArgs {
    /// End a run (exit 2; in a hunt, that seed's error) that handles more events than this.
    #[arg(
        long,
        value_name = "N",
        default_value_t = splitbrain_sim::limits::DEFAULT_MAX_EVENTS,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub max_events: u64,
    /// End a run that holds more events and messages queued at once than this.
    #[arg(
        long,
        value_name = "N",
        default_value_t = splitbrain_sim::limits::DEFAULT_MAX_IN_FLIGHT,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub max_in_flight: u64,
    /// End a run that holds more than this at once (e.g. 8GiB, 512MiB): its messages in
    /// flight with their bodies, durable state and kept trace, counted as they grow, so the
    /// verdict is the same for any --jobs and on replay. Per run: N jobs may hold N times this.
    #[arg(long, value_name = "SIZE", default_value = "1GiB", value_parser = parse_bytes)]
    pub max_memory: u64,
    /// End a run once the messages one node has in flight (sent, not yet handled by their
    /// receivers nor lost) hold more than this: names the node, the message type and its size.
    #[arg(long, value_name = "SIZE", default_value = "256MiB", value_parser = parse_bytes)]
    pub max_node_in_flight: u64,
    /// End a run that has taken longer than this, by the wall clock (e.g. 30m, 2h): a large
    /// cluster can make each event slow.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_wall_ms)]
    pub max_time: u64,
}

/// `--max-time`: a duration as scenarios write them (`90s`, `10m`), in whole milliseconds.
fn parse_wall_ms(text: &str) -> Result<u64, String> {
    let ns = splitbrain_sim::duration::parse_duration(text)
        .map_err(|e| format!("{e}; write a duration such as 90s, 10m or 2h"))?;
    if ns < 1_000_000 {
        return Err("write at least 1ms".to_string());
    }
    Ok(ns / 1_000_000)
}

impl LimitArgs {
    /// The limits as the engine takes them.
    pub fn limits(&self) -> splitbrain_sim::RunLimits {
        splitbrain_sim::RunLimits {
            max_events: self.max_events,
            max_in_flight: self.max_in_flight,
            max_memory_bytes: self.max_memory,
            max_node_in_flight_bytes: self.max_node_in_flight,
            max_wall_ms: self.max_time,
        }
    }

    /// The flags that differ from the defaults, as a replay command writes them.
    pub fn flag_words(&self) -> Vec<String> {
        let defaults = splitbrain_sim::RunLimits::default();
        let mut words = Vec::new();
        if self.max_events != defaults.max_events {
            words.extend(["--max-events".to_string(), self.max_events.to_string()]);
        }
        if self.max_in_flight != defaults.max_in_flight {
            words.extend([
                "--max-in-flight".to_string(),
                self.max_in_flight.to_string(),
            ]);
        }
        if self.max_memory != defaults.max_memory_bytes {
            words.extend(["--max-memory".to_string(), format!("{}B", self.max_memory)]);
        }
        if self.max_node_in_flight != defaults.max_node_in_flight_bytes {
            words.extend([
                "--max-node-in-flight".to_string(),
                format!("{}B", self.max_node_in_flight),
            ]);
        }
        if self.max_time != defaults.max_wall_ms {
            words.extend(["--max-time".to_string(), format!("{}ms", self.max_time)]);
        }
        words
    }
}

/// A size in bytes: a whole number with a unit `B`, `KiB`, `MiB`, `GiB`, `TiB` (or `K`, `M`,
/// `G`, `T`, `KB`, `MB`, `GB`, `TB`, all binary).
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let hint = "write a whole number and a unit, e.g. 8GiB, 512MiB";
    let number: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a size; {hint}"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        other => return Err(format!("unknown unit `{other}`; {hint}")),
    };
    let bytes = number
        .checked_mul(1u64 << shift)
        .ok_or_else(|| format!("`{text}` is more bytes than this machine counts; {hint}"))?;
    if bytes == 0 {
        return Err(format!("write at least 1B; {hint}"));
    }
    Ok(bytes)
}

impl FencingMode {
    /// The mode as the lab takes it.
    pub fn lab(self) -> splitbrain_lab::Fencing {
        match self {
            FencingMode::Scenario => splitbrain_lab::Fencing::Scenario,
            FencingMode::On => splitbrain_lab::Fencing::On,
            FencingMode::Off => splitbrain_lab::Fencing::Off,
            FencingMode::Both => splitbrain_lab::Fencing::Both,
        }
    }
}

/// A pool of `jobs` worker threads (every core when `None`), for the commands that run many
/// seeds; their results never depend on it.
pub fn worker_pool(jobs: Option<usize>) -> Result<rayon::ThreadPool, String> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = splitbrain_lab::hunt::seeds::worker_threads(jobs, cores)
        .map_err(|e| format!("error: {e}"))?;
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| format!("error: cannot start {threads} worker threads: {e}"))
}
