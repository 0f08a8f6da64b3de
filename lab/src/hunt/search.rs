//! How a hunt's seeds draw their faults (`hunt --search`): the nemesis's mix as written, swarm
//! (each seed turns fault kinds on and off), or guided ([`super::guided`]).

use splitbrain_scenario::Scenario;

/// A hunt's search.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Search {
    /// Every seed draws from the nemesis's whole mix (`nemesis.swarm` off).
    Plain,
    /// Each seed first draws which fault kinds are on, and their weights (`nemesis.swarm` on).
    Swarm,
    /// Fresh seeds as the scenario says, and mutants of kept schedules.
    Guided,
}

impl Search {
    /// The name outputs write: `plain`, `swarm` or `guided`.
    pub fn name(self) -> &'static str {
        match self {
            Search::Plain => "plain",
            Search::Swarm => "swarm",
            Search::Guided => "guided",
        }
    }

    /// Sets `scenario`'s nemesis for the search asked (`None`: as the scenario says) and gives
    /// the search that runs. `Plain` and `Swarm` set `nemesis.swarm`; `Guided` keeps it.
    pub fn apply(asked: Option<Search>, scenario: &mut Scenario) -> Result<Search, SearchError> {
        let swarm_as_written = scenario.nemesis.as_ref().is_some_and(|n| n.swarm);
        match (asked, scenario.nemesis.as_mut()) {
            (None, _) if swarm_as_written => Ok(Search::Swarm),
            (None, _) | (Some(Search::Plain), None) => Ok(Search::Plain),
            (Some(search), None) => Err(SearchError::NoNemesis(search)),
            (Some(Search::Plain), Some(n)) => {
                n.swarm = false;
                Ok(Search::Plain)
            }
            (Some(Search::Swarm), Some(n)) => {
                n.swarm = true;
                Ok(Search::Swarm)
            }
            (Some(Search::Guided), Some(_)) => Ok(Search::Guided),
        }
    }
}

/// Why a search cannot run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SearchError {
    /// Swarm and guided search need a nemesis.
    #[error("--search {}: the scenario has no `nemesis`, so seeds draw no faults to search with\n  hint: add a `nemesis: (...)` to the scenario (docs/hunting.md), or leave --search out", .0.name())]
    NoNemesis(Search),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(nemesis: &str) -> Scenario {
        let text = format!(r#"Scenario(duration: "20s", nodes: 3, algorithm: Raft(){nemesis})"#);
        splitbrain_scenario::parse(&text, "s.ron").expect("a valid scenario")
    }

    const SWARM: &str = r#", nemesis: (mean_interval: "1s", fault_duration: ("100ms", "2s"), quiet: "5s", swarm: true)"#;

    #[test]
    fn plain_and_swarm_set_the_nemesis_and_none_keeps_it() {
        let mut s = scenario(SWARM);
        assert_eq!(Search::apply(None, &mut s), Ok(Search::Swarm));
        assert_eq!(
            Search::apply(Some(Search::Plain), &mut s),
            Ok(Search::Plain)
        );
        assert!(!s.nemesis.as_ref().unwrap().swarm);
        assert_eq!(Search::apply(None, &mut s), Ok(Search::Plain));
        assert_eq!(
            Search::apply(Some(Search::Swarm), &mut s),
            Ok(Search::Swarm)
        );
        assert!(s.nemesis.as_ref().unwrap().swarm);
        assert_eq!(
            Search::apply(Some(Search::Guided), &mut s),
            Ok(Search::Guided)
        );
        assert!(
            s.nemesis.as_ref().unwrap().swarm,
            "guided keeps the setting"
        );
    }

    #[test]
    fn without_a_nemesis_only_plain_runs() {
        let mut s = scenario("");
        assert_eq!(Search::apply(None, &mut s), Ok(Search::Plain));
        assert_eq!(
            Search::apply(Some(Search::Plain), &mut s),
            Ok(Search::Plain)
        );
        let e = Search::apply(Some(Search::Guided), &mut s).unwrap_err();
        assert_eq!(e, SearchError::NoNemesis(Search::Guided));
        assert!(e
            .to_string()
            .starts_with("--search guided: the scenario has no `nemesis`"));
    }
}
