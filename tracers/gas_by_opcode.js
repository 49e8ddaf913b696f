// Gas by opcode.
//
// What: the gas each opcode cost in total (geth's `log.getCost()`: static plus dynamic gas;
// for CALL-family opcodes this includes the gas forwarded to the callee), and how often it ran.
// Output: {"<OPNAME>": {"count": n, "gas": total}, ...}
// Example: chaintrace tx 0x5c50…e1 --json --tracer tracers/gas_by_opcode.js
{
  gas: {},
  step: function (log, db) {
    var op = log.op.toString();
    var e = this.gas[op];
    if (e === undefined) { e = this.gas[op] = { count: 0, gas: 0 }; }
    e.count += 1;
    e.gas += log.getCost();
  },
  fault: function (log, db) {},
  result: function (ctx, db) { return this.gas; }
}
