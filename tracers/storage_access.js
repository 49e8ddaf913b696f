// Storage reads and writes per contract.
//
// What: every SLOAD and SSTORE, grouped by the contract whose storage it touched (the
// executing context: a DELEGATECALL touches the caller's storage). Reads record the value
// found (read from `db`, which reflects earlier writes of the same transaction); writes record
// the value written. Opcodes that failed before executing are skipped.
// Output: {"0x<contract>": {"reads": {"0x<slot>": "0x<value>"}, "writes": {"0x<slot>": "0x<value>"}}}
// Example: chaintrace tx 0x5c50…e1 --json --tracer tracers/storage_access.js
{
  contracts: {},
  entry: function (addr) {
    var e = this.contracts[addr];
    if (e === undefined) { e = this.contracts[addr] = { reads: {}, writes: {} }; }
    return e;
  },
  word: function (n) {
    var h = n.toString(16);
    while (h.length < 64) { h = "0" + h; }
    return "0x" + h;
  },
  step: function (log, db) {
    if (log.getError() !== undefined) { return; }
    var op = log.op.toNumber();
    if (op !== 0x54 && op !== 0x55) { return; }
    var address = log.contract.getAddress();
    var e = this.entry(toHex(address));
    var slot = this.word(log.stack.peek(0));
    if (op === 0x54) {
      e.reads[slot] = toHex(db.getState(address, toWord(slot)));
    } else {
      e.writes[slot] = this.word(log.stack.peek(1));
    }
  },
  fault: function (log, db) {},
  result: function (ctx, db) { return this.contracts; }
}
