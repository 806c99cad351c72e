//! PyO3 glue only: a scenario (JSON text) in, columnar results out.
//!
//! The simulation runs with the GIL released; the progress callback takes
//! it back briefly. A user's mistake becomes `ValueError`, anything else a
//! Python exception too: a panic never crosses into Python as an abort.

use aqmlab_sim::{Column, Results, RunError, Scalar, Table};
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

fn table<'py>(py: Python<'py>, t: &Table) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, col) in &t.columns {
        let list = match col {
            Column::F64(v) => PyList::new(py, v)?,
            Column::U64(v) => PyList::new(py, v)?,
            Column::I64(v) => PyList::new(py, v)?,
            Column::Str(v) => PyList::new(py, v)?,
            // One Python string per distinct value, shared by its rows.
            Column::Cat { values, codes } => {
                let mut strings: Vec<Option<Bound<'py, PyString>>> = vec![None; values.len()];
                let mut string = |c: u32| {
                    strings[c as usize]
                        .get_or_insert_with(|| PyString::new(py, &values[c as usize]))
                        .clone()
                };
                PyList::new(py, codes.iter().map(|&c| string(c)))?
            }
            Column::Bool(v) => PyList::new(py, v)?,
            Column::OptF64(v) => PyList::new(py, v)?,
            Column::OptU64(v) => PyList::new(py, v)?,
        };
        d.set_item(name, list)?;
    }
    Ok(d)
}

fn to_python<'py>(py: Python<'py>, r: &Results) -> PyResult<Bound<'py, PyDict>> {
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
    out.set_item("flows", table(py, &r.flows)?)?;
    out.set_item("queues", table(py, &r.queues)?)?;
    out.set_item("timeseries", table(py, &r.timeseries)?)?;
    out.set_item("histograms", table(py, &r.histograms)?)?;
    Ok(out)
}

/// Run a resolved scenario given as JSON. `progress(simulated_seconds)` is
/// called every quarter second or so of wall time.
#[pyfunction]
#[pyo3(signature = (scenario_json, progress=None))]
fn run<'py>(
    py: Python<'py>,
    scenario_json: &str,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let mut callback_error: Option<PyErr> = None;
    let outcome = py.detach(|| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            aqmlab_sim::run_json(scenario_json, |t| {
                let Some(cb) = &progress else { return true };
                Python::attach(|py| {
                    if let Err(e) = py.check_signals() {
                        callback_error = Some(e);
                        return false;
                    }
                    match cb.call1(py, (t,)) {
                        Ok(_) => true,
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
        Ok(Ok(results)) => to_python(py, &results),
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
/// fields and their values. Raises `ValueError("field: message")`.
#[pyfunction]
fn validate_qdisc(spec_json: &str) -> PyResult<()> {
    let spec: aqmlab_sim::scenario::QdiscSpec =
        serde_json::from_str(spec_json).map_err(|e| PyValueError::new_err(e.to_string()))?;
    spec.validate()
        .map_err(|e| PyValueError::new_err(format!("{}: {}", e.field, e.message)))
}

/// The version of the simulator core.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(validate_qdisc, m)?)?;
    Ok(())
}
