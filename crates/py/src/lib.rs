//! PyO3 glue only: a scenario (a small JSON text and its numeric columns as
//! buffers) in, columnar results out.
//!
//! The simulation runs with the GIL released; the progress callback takes
//! it back briefly. A user's mistake becomes `ValueError`, anything else a
//! Python exception too: a panic never crosses into Python as an abort.

#[cfg(target_os = "linux")]
mod alloc;

#[cfg(target_os = "linux")]
#[global_allocator]
static ALLOCATOR: alloc::HugePages = alloc::HugePages;

use aqmlab_qdisc::QdiscSpec;
use aqmlab_sim::scenario::ColumnMut;
use aqmlab_sim::{
    Accelerations, Column, Names, Results, RunError, Scalar, Scenario, ScenarioError, Table,
};
use pyo3::buffer::{Element, PyBuffer};
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

/// A column's values as raw bytes in native order, for `numpy.frombuffer`:
/// 8 bytes a number where a Python list would hold a 32-byte object each.
/// Written straight into the Python object, with no copy in between.
fn raw<'py, T: Copy, const N: usize>(
    py: Python<'py>,
    values: &[T],
    bytes_of: impl Fn(T) -> [u8; N],
) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, values.len() * N, |out| {
        for (chunk, &v) in out.chunks_exact_mut(N).zip(values) {
            chunk.copy_from_slice(&bytes_of(v));
        }
        Ok(())
    })
}

/// Flags as one byte each (`numpy.bool_`).
fn flags<'py>(
    py: Python<'py>,
    values: impl ExactSizeIterator<Item = bool>,
) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, values.len(), |out| {
        for (byte, flag) in out.iter_mut().zip(values) {
            *byte = u8::from(flag);
        }
        Ok(())
    })
}

/// Strings as Arrow lays them out: their UTF-8 bytes end to end, and where
/// each starts (i64, one more than strings). Python makes one Arrow string
/// array of them, with no Python object per string: a million flows'
/// results name four million links.
fn strings<'py>(py: Python<'py>, names: &Names) -> PyResult<Bound<'py, PyTuple>> {
    let mut offsets = Vec::with_capacity(names.len() + 1);
    let mut text = String::new();
    offsets.push(0i64);
    for name in names.iter() {
        text.push_str(&name);
        offsets.push(text.len() as i64);
    }
    (
        raw(py, &offsets, i64::to_ne_bytes)?,
        PyBytes::new(py, text.as_bytes()),
    )
        .into_pyobject(py)
}

/// A table as `{name: (kind, payload...)}`; `aqmlab.results` makes the
/// polars columns. Numbers travel as bytes, text as UTF-8 bytes and offsets.
/// Each column is freed once handed over, so that a table is never whole
/// on both sides.
fn table<'py>(py: Python<'py>, t: Table) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, col) in t.columns {
        let column: Bound<'py, PyTuple> = match col {
            Column::F64(v) => ("f64", raw(py, &v, f64::to_ne_bytes)?).into_pyobject(py)?,
            Column::U64(v) => ("u64", raw(py, &v, u64::to_ne_bytes)?).into_pyobject(py)?,
            Column::I64(v) => ("i64", raw(py, &v, i64::to_ne_bytes)?).into_pyobject(py)?,
            Column::Bool(v) => ("bool", flags(py, v.iter().copied())?).into_pyobject(py)?,
            Column::OptF64(v) => (
                "opt_f64",
                raw(py, &v, |x| x.unwrap_or(0.0).to_ne_bytes())?,
                flags(py, v.iter().map(Option::is_some))?,
            )
                .into_pyobject(py)?,
            Column::OptU64(v) => (
                "opt_u64",
                raw(py, &v, |x| x.unwrap_or(0).to_ne_bytes())?,
                flags(py, v.iter().map(Option::is_some))?,
            )
                .into_pyobject(py)?,
            // Arrow's list layout: i64 offsets (one more than rows) into
            // the values end to end, and which rows have a list.
            Column::OptListU32(v) => {
                let mut offsets = vec![0i64];
                let mut values = Vec::new();
                for list in &v {
                    values.extend(list.iter().flatten());
                    offsets.push(values.len() as i64);
                }
                (
                    "opt_list_u32",
                    (
                        raw(py, &offsets, i64::to_ne_bytes)?,
                        raw(py, &values, u32::to_ne_bytes)?,
                    ),
                    flags(py, v.iter().map(Option::is_some))?,
                )
                    .into_pyobject(py)?
            }
            Column::Str(v) => ("str", strings(py, &v)?).into_pyobject(py)?,
            // Each distinct value once, and a code per row.
            Column::Cat { values, codes } => (
                "cat",
                strings(py, &values)?,
                raw(py, &codes, u32::to_ne_bytes)?,
            )
                .into_pyobject(py)?,
        };
        d.set_item(name, column)?;
    }
    Ok(d)
}

fn to_python(py: Python<'_>, r: Results) -> PyResult<Bound<'_, PyDict>> {
    let summary = PyDict::new(py);
    for (k, v) in &r.summary {
        match v {
            Scalar::F64(x) => summary.set_item(k, x)?,
            Scalar::U64(x) => summary.set_item(k, x)?,
            Scalar::Str(x) => summary.set_item(k, x)?,
            Scalar::Bool(x) => summary.set_item(k, x)?,
        }
    }
    let out = PyDict::new(py);
    out.set_item("summary", summary)?;
    out.set_item("flows", table(py, r.flows)?)?;
    out.set_item("queues", table(py, r.queues)?)?;
    out.set_item("timeseries", table(py, r.timeseries)?)?;
    out.set_item("histograms", table(py, r.histograms)?)?;
    let trace = r.trace.map(|t| table(py, t)).transpose()?;
    out.set_item("trace", trace)?;
    out.set_item("pcap", r.pcap.map(|file| PyBytes::new(py, &file)))?;
    Ok(out)
}

/// Return the heap freed so far to the system: glibc keeps freed blocks in
/// the middle of its heap resident. After a run those are the simulation's
/// many small blocks (a box per flow), on top of which Python then builds
/// the result frames (a million flows: 150 MB of peak RSS).
fn give_back_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free pages of glibc's heap.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// A buffer's integers, each converted to `T` (a column's type) with a
/// check: numpy hands over whatever width and sign it holds.
fn integers<T: TryFrom<i128>>(
    py: Python<'_>,
    buffer: &Bound<'_, PyAny>,
    name: &str,
) -> PyResult<Vec<T>> {
    fn convert<E: Element + Copy + Into<i128>, T: TryFrom<i128>>(
        py: Python<'_>,
        buffer: &PyBuffer<E>,
        name: &str,
    ) -> PyResult<Vec<T>> {
        let cells = buffer.as_slice(py).ok_or_else(|| {
            PyValueError::new_err(format!("{name}: the buffer is not contiguous"))
        })?;
        let mut out = Vec::with_capacity(cells.len());
        for (i, cell) in cells.iter().enumerate() {
            let v: i128 = cell.get().into();
            let bad = |what: &str| ScenarioError::new(format!("{name}[{i}]"), what);
            let error = if v < 0 {
                bad(&format!("must not be negative, got {v}"))
            } else {
                match T::try_from(v) {
                    Ok(x) => {
                        out.push(x);
                        continue;
                    }
                    Err(_) => bad(&format!("{v} is too large")),
                }
            };
            return Err(PyValueError::new_err(error.to_string()));
        }
        Ok(out)
    }
    macro_rules! try_as {
        ($($t:ty),*) => {$(
            if let Ok(b) = PyBuffer::<$t>::get(buffer) {
                return convert::<$t, T>(py, &b, name);
            }
        )*};
    }
    try_as!(u32, i64, u64, i32, u8, i8, u16, i16);
    Err(PyValueError::new_err(format!(
        "{name}: expected a buffer of integers"
    )))
}

/// A buffer of floating-point numbers (the check of their range is the
/// scenario's).
fn floats(py: Python<'_>, buffer: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<f64>> {
    let buffer = PyBuffer::<f64>::get(buffer)
        .map_err(|_| PyValueError::new_err(format!("{name}: expected a buffer of float64")))?;
    buffer.to_vec(py)
}

/// Fill the scenario's columns from `columns` (name -> buffer), each name
/// the column's path in the JSON form ("links.rate_bps").
fn fill_columns(
    py: Python<'_>,
    scenario: &mut Scenario,
    columns: &Bound<'_, PyDict>,
) -> PyResult<()> {
    for (name, buffer) in columns.iter() {
        let name: String = name.extract()?;
        match scenario.column_mut(&name) {
            Some(ColumnMut::U32(c)) => *c = integers(py, &buffer, &name)?,
            Some(ColumnMut::U64(c)) => *c = integers(py, &buffer, &name)?,
            Some(ColumnMut::F64(c)) => *c = floats(py, &buffer, &name)?,
            Some(ColumnMut::Bool(c)) => {
                let flags: Vec<u8> = integers(py, &buffer, &name)?;
                if let Some(i) = flags.iter().position(|&f| f > 1) {
                    let e = ScenarioError::new(format!("{name}[{i}]"), "must be 0 or 1");
                    return Err(PyValueError::new_err(e.to_string()));
                }
                *c = flags.into_iter().map(|f| f == 1).collect();
            }
            None => return Err(PyValueError::new_err(format!("{name}: no such column"))),
        }
    }
    Ok(())
}

/// A resolved scenario from its JSON form and its columns (see [`run`]).
fn scenario(
    py: Python<'_>,
    scenario_json: &str,
    columns: &Bound<'_, PyDict>,
) -> PyResult<Scenario> {
    let mut scenario: Scenario = serde_json::from_str(scenario_json)
        .map_err(|e| PyValueError::new_err(format!("scenario: {e}")))?;
    fill_columns(py, &mut scenario, columns)?;
    Ok(scenario)
}

/// Check a resolved scenario (as [`run`] takes it) as a run checks it first,
/// without running it: a resolved scenario read from a file is checked so
/// before its run is estimated. Raises `ValueError` naming the field.
#[pyfunction]
fn check<'py>(py: Python<'py>, scenario_json: &str, columns: &Bound<'py, PyDict>) -> PyResult<()> {
    scenario(py, scenario_json, columns)?
        .check()
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Run a resolved scenario: `scenario_json` is its JSON form without the
/// columns given in `columns` (name -> a buffer of integers, e.g. a numpy
/// array), which take no more than their own size on the way in.
/// `progress(simulated_seconds)` is called every quarter second or so of
/// wall time, when Python's pending signals are also handled: a signal
/// handler that raises (`KeyboardInterrupt`) stops the run.
#[pyfunction]
#[pyo3(signature = (scenario_json, columns, progress=None, engine="fast"))]
fn run<'py>(
    py: Python<'py>,
    scenario_json: &str,
    columns: &Bound<'py, PyDict>,
    progress: Option<Py<PyAny>>,
    engine: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let accelerations =
        Accelerations::parse(engine).map_err(|e| PyValueError::new_err(format!("engine: {e}")))?;
    let scenario = scenario(py, scenario_json, columns)?;
    give_back_freed_memory(); // what resolving the scenario in Python left behind
    let mut callback_error: Option<PyErr> = None;
    let outcome = py.detach(|| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            // Called every quarter second or so of wall time, with or without
            // a progress callback: Python's signal handlers (Ctrl-C, SIGTERM)
            // run here, so that a quiet run stops as promptly as one with a bar.
            aqmlab_sim::run_with(scenario, accelerations, |t| {
                Python::attach(|py| {
                    let outcome = py.check_signals().and_then(|()| match &progress {
                        Some(cb) => cb.call1(py, (t,)).map(drop),
                        None => Ok(()),
                    });
                    match outcome {
                        Ok(()) => true,
                        Err(e) => {
                            callback_error = Some(e);
                            false
                        }
                    }
                })
            })
        }))
    });
    match outcome {
        Ok(Ok(results)) => {
            let out = to_python(py, results);
            give_back_freed_memory();
            out
        }
        Ok(Err(RunError::Invalid(e))) => Err(PyValueError::new_err(e.to_string())),
        Ok(Err(RunError::Cancelled)) => {
            Err(callback_error.unwrap_or_else(|| PyKeyboardInterrupt::new_err("run cancelled")))
        }
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Err(PyRuntimeError::new_err(format!(
                "internal error in the simulator (a bug): {msg}"
            )))
        }
    }
}

/// Check one queue discipline's spec (JSON of `QdiscSpec`): its kind, its
/// fields and their values; return it as the core reads it, every default
/// filled in. Raises `ValueError(field, message)`, `field` the path of the
/// parameter within the discipline's table (`"bloom.period"`, `""` when the
/// mistake names none).
#[pyfunction]
fn validate_qdisc(spec_json: &str) -> PyResult<String> {
    let spec = QdiscSpec::from_json(spec_json)
        .and_then(|spec| spec.validate().map(|()| spec))
        .map_err(|e| PyValueError::new_err((e.field, e.message)))?;
    Ok(serde_json::to_string(&spec).expect("a spec is JSON"))
}

/// Every queue discipline, as JSON: a list of `{kind, summary, parameters}`,
/// each parameter with its name, unit, doc, default (the core's value) and
/// whether it is required; a table's own parameters under `parameters`.
#[pyfunction]
fn qdisc_catalogue() -> String {
    serde_json::to_string(&aqmlab_qdisc::catalogue()).expect("the catalogue is JSON")
}

/// A discipline's CPU time per packet on synthetic traffic
/// (`aqmlab_qdisc::cost`): `classes` one per flow (0 TCP, 1 tagged UDP, 2
/// untagged UDP). Returns (nanoseconds per packet, drops in one pass).
/// Raises `ValueError(field, message)` for a bad spec.
#[pyfunction]
#[pyo3(signature = (spec_json, classes, packets, size, rate_bps, load, repeats, seed))]
#[allow(clippy::too_many_arguments)]
fn qdisc_cost(
    py: Python<'_>,
    spec_json: &str,
    classes: Vec<u8>,
    packets: u64,
    size: u32,
    rate_bps: u64,
    load: f64,
    repeats: u32,
    seed: u64,
) -> PyResult<(f64, u64)> {
    use aqmlab_qdisc::{cost, TrafficClass};
    let spec = QdiscSpec::from_json(spec_json)
        .and_then(|spec| spec.validate().map(|()| spec))
        .map_err(|e| PyValueError::new_err((e.field, e.message)))?;
    let classes = (classes.iter())
        .map(|&c| match c {
            0 => Ok(TrafficClass::Tcp),
            1 => Ok(TrafficClass::UdpTagged),
            2 => Ok(TrafficClass::UdpUntagged),
            _ => Err(PyValueError::new_err((
                "classes",
                format!("{c} is not 0, 1 or 2"),
            ))),
        })
        .collect::<PyResult<Vec<_>>>()?;
    if classes.is_empty() || rate_bps == 0 || size == 0 || load.is_nan() || load <= 0.0 {
        return Err(PyValueError::new_err((
            "workload",
            "needs flows, a rate, a size and a load above 0",
        )));
    }
    let work = cost::Workload {
        classes,
        packets,
        size,
        rate_bps,
        load,
        repeats,
        seed,
    };
    let c = py.detach(|| cost::measure(&spec, &work));
    Ok((c.ns_per_packet, c.drops))
}

/// The version of the simulator core.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// How the extension was built: "pgo" (profile-guided, `tools/pgo.py`),
/// "release", "instrumented" (PGO's training build) or "unknown" (built
/// without `tools/pgo.py`). Benchmarks print it beside their figures.
#[pyfunction]
fn build() -> &'static str {
    option_env!("AQMLAB_BUILD").unwrap_or("unknown")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(build, m)?)?;
    m.add_function(wrap_pyfunction!(validate_qdisc, m)?)?;
    m.add_function(wrap_pyfunction!(qdisc_catalogue, m)?)?;
    m.add_function(wrap_pyfunction!(qdisc_cost, m)?)?;
    Ok(())
}
