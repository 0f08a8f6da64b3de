//! RON text to a [`Scenario`]: read, validated, and the first problem in the file reported
//! with its place.

use crate::error::{self, ErrorKind, ScenarioError};
use crate::scenario::Scenario;
use crate::{file, locate, raw, text, validate};
use ron::extensions::Extensions;
use std::path::Path;

/// The RON extensions a scenario is read (and written) with. `implicit_some`: optional fields
/// are written `bound: "5s"`, not `bound: Some("5s")`. `unwrap_variant_newtypes`: an
/// algorithm's settings are written `Raft(heartbeat: "50ms")`, not `Raft((heartbeat: ..))`.
pub(crate) const EXTENSIONS: Extensions =
    Extensions::IMPLICIT_SOME.union(Extensions::UNWRAP_VARIANT_NEWTYPES);

/// Parses and validates a scenario. `origin` is the file path used in error messages; its
/// stem names a scenario that has no `name`.
pub fn parse(source: &str, origin: &str) -> Result<Scenario, ScenarioError> {
    // A byte-order mark is dropped: editors do not show it, so columns count from the first
    // character they show.
    let source = source.strip_prefix('\u{feff}').unwrap_or(source);
    text::check(source, origin)?;
    let options = ron::Options::default().with_default_extension(EXTENSIONS);
    let file = read_file(source, &options).map_err(|e| error::from_ron(e, source, origin))?;
    validate::lower(file, &default_name(origin))
        .map_err(|problems| first_problem(problems, source, origin))
}

/// Reads the file in two steps (see `raw::ScenarioFile`): its structure with each algorithm's
/// settings as text, then each algorithm's settings with the extensions the file enabled
/// (`#![enable(...)]`) besides ours, as one reading would.
fn read_file(
    source: &str,
    options: &ron::Options,
) -> Result<raw::ScenarioFile, ron::error::SpannedError> {
    use serde::Deserialize;
    let mut de = ron::Deserializer::from_str_with_options(source, options)?;
    let file = raw::ScenarioFile::<&ron::value::RawValue>::deserialize(&mut de)
        .map_err(|e| de.span_error(e))?;
    de.end().map_err(|e| de.span_error(e))?;
    let options = options.clone().with_default_extension(de.extensions());
    file.read_algorithms(source, &options)
}

/// Reads, parses and validates the scenario file at `path`. Only a regular file of at most
/// [`MAX_SCENARIO_BYTES`](crate::MAX_SCENARIO_BYTES) of UTF-8 is read: a named pipe, a device or a directory is refused
/// before anything is read from it.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let origin = path.display().to_string();
    let source = file::read_source(path, &origin)?;
    parse(&source, &origin)
}

/// The name of a scenario that does not give one: its file stem, else `unnamed`.
fn default_name(origin: &str) -> String {
    Path::new(origin)
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .filter(|stem| stem.chars().any(char::is_alphanumeric))
        .unwrap_or_else(|| "unnamed".to_string())
}

/// The problem that comes first in the file (problems without a place come last).
fn first_problem(problems: Vec<validate::Problem>, source: &str, origin: &str) -> ScenarioError {
    let positions = locate::value_positions(source).unwrap_or_default();
    // Every problem gets a place: when the text cannot be followed to the value, the
    // start of the scenario.
    let start = locate::skip_trivia_from(source, (1, 1)).unwrap_or((1, 1));
    let mut errors = problems.into_iter().map(|problem| {
        let location = locate::find(&positions, &problem.path).or(Some(start));
        ScenarioError::new(origin, location, problem.kind)
    });
    let first = errors.next();
    let earliest = errors.fold(first, |best, error| match best {
        Some(best) if rank(&best) <= rank(&error) => Some(best),
        _ => Some(error),
    });
    // Validation only fails with at least one problem.
    earliest.unwrap_or_else(|| {
        ScenarioError::new(
            origin,
            None,
            ErrorKind::Syntax {
                message: "invalid scenario".into(),
            },
        )
    })
}

fn rank(error: &ScenarioError) -> (bool, (usize, usize)) {
    (error.location.is_none(), error.location.unwrap_or((0, 0)))
}
