// Gas by opcode.
//
// What: the gas each opcode cost in total (geth's `log.getCost()`: static plus dynamic gas;
// for CALL-family opcodes this includes the gas forwarded to the callee), and how often it ran.
// Output: {"<OPNAME>": {"count": n, "gas": total}, ...}
// Example: chaintrace tx 0x5c50…e1 --json --tracer tracers/gas_by_opcode.js
// Counters are kept by opcode number (an array index: no string per step); the name is taken
// once per opcode, the first time it runs.
{
  byNum: [],
  step: function (log, db) {
    var n = log.op.toNumber();
    var e = this.byNum[n];
    if (e === undefined) { e = this.byNum[n] = { name: log.op.toString(), count: 0, gas: 0 }; }
    e.count += 1;
    e.gas += log.getCost();
  },
  fault: function (log, db) {},
  result: function (ctx, db) {
    // forEach, not a loop statement: a script without loop statements is called on the fast
    // path (see loop_free in src/js/source.rs); forEach skips opcodes never run.
    var out = {};
    this.byNum.forEach(function (e) { out[e.name] = { count: e.count, gas: e.gas }; });
    return out;
  }
}
