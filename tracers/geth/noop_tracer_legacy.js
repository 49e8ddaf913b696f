// noopTracerLegacy — stands for geth's eth/tracers/js/internal/tracers/noop_tracer_legacy.js.
// Does nothing and returns {}.
{
    step: function () {},
    fault: function () {},
    result: function () { return {}; }
}
