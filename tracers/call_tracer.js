// callTracer in JavaScript: the same call tree as the native callTracer (geth's shape).
//
// What: every call frame (CALL, STATICCALL, DELEGATECALL, CALLCODE, CREATE, CREATE2,
// SELFDESTRUCT) with gas, gas used, input, output, error and decoded revert reason.
// Config: {"onlyTopCall": true} keeps only the top frame. (Logs are not part of the JS API.)
// Output: {from, gas, gasUsed, to, input, output?, error?, revertReason?, calls?, value?, type}
//   with quantities as 0x hex, exactly as `--tracer callTracer` prints them.
// Example: chaintrace tx --fixture fixtures/reverted-nested.json --json --tracer tracers/call_tracer.js
{
  stack: [{ calls: [] }],
  onlyTop: false,

  setup: function (config) {
    this.onlyTop = !!JSON.parse(config).onlyTopCall;
  },

  hex: function (n) {
    return "0x" + bigInt(n).toString(16);
  },

  // geth's abi.UnpackRevert for Error(string) and Panic(uint256).
  revertReason: function (out) {
    var d = out.slice(2);
    var word = function (at) { return d.length >= (at + 32) * 2 ? bigInt(d.slice(at * 2, (at + 32) * 2), 16) : null; };
    var sel = d.slice(0, 8), args = d.slice(8);
    d = args;
    if (sel === "08c379a0") {
      var off = word(0);
      if (off === null || off.greater(d.length / 2)) { return undefined; }
      var len = word(off.toJSNumber());
      var start = (off.toJSNumber() + 32) * 2;
      if (len === null || d.length < start + len.toJSNumber() * 2) { return undefined; }
      var hex = d.slice(start, start + len.toJSNumber() * 2), esc = "";
      for (var i = 0; i < hex.length; i += 2) { esc += "%" + hex.slice(i, i + 2); }
      try { return decodeURIComponent(esc); } catch (e) {
        var s = "";
        for (var j = 0; j < hex.length; j += 2) { s += String.fromCharCode(parseInt(hex.slice(j, j + 2), 16)); }
        return s;
      }
    }
    if (sel === "4e487b71") {
      var code = word(0);
      if (code === null) { return undefined; }
      var known = { 0: "generic panic", 1: "assert(false)", 17: "arithmetic underflow or overflow",
        18: "division or modulo by zero", 33: "enum overflow", 34: "invalid encoded storage byte array accessed",
        49: "out-of-bounds array access; popping on an empty array", 50: "out-of-bounds access of an array or bytesN",
        65: "out of memory", 81: "uninitialized function" };
      var k = code.lesser(256) ? known[code.toJSNumber()] : undefined;
      return k !== undefined ? k : "unknown panic code: 0x" + code.toString(16);
    }
    return undefined;
  },

  // geth's processOutput: output on success; on failure the error, no `to` for a failed
  // CREATE, and the output (with its reason) only for a revert.
  finish: function (call, error, output) {
    if (error === undefined) {
      if (output !== "0x") { call.output = output; }
      return;
    }
    call.error = error;
    if (call.type === "CREATE" || call.type === "CREATE2") { delete call.to; }
    if (error !== "execution reverted" || output === "0x") { return; }
    call.output = output;
    if (output.length >= 10) {
      var reason = this.revertReason(output);
      if (reason !== undefined) { call.revertReason = reason; }
    }
  },

  // Key order of geth's callFrame.
  ordered: function (c) {
    var keys = ["from", "gas", "gasUsed", "to", "input", "output", "error", "revertReason", "calls", "value", "type"];
    var o = {};
    for (var i = 0; i < keys.length; i++) {
      var k = keys[i];
      if (c[k] !== undefined && !(k === "calls" && c.calls.length === 0)) { o[k] = c[k]; }
    }
    return o;
  },

  enter: function (frame) {
    var call = { type: frame.getType(), from: toHex(frame.getFrom()), to: toHex(frame.getTo()),
      input: toHex(frame.getInput()), gas: this.hex(frame.getGas()), calls: [] };
    var v = frame.getValue();
    if (v !== undefined) { call.value = "0x" + v.toString(16); }
    this.stack.push(call);
  },

  exit: function (res) {
    var call = this.stack.pop();
    call.gasUsed = this.hex(res.getGasUsed());
    this.finish(call, res.getError(), toHex(res.getOutput()));
    if (!this.onlyTop) { this.stack[this.stack.length - 1].calls.push(this.ordered(call)); }
  },

  fault: function (log, db) {},

  result: function (ctx, db) {
    var top = { type: ctx.type, from: toHex(ctx.from), to: toHex(ctx.to), input: toHex(ctx.input),
      gas: this.hex(ctx.gas), gasUsed: this.hex(ctx.gasUsed), value: "0x" + ctx.value.toString(16),
      calls: this.stack[0].calls };
    this.finish(top, ctx.error, toHex(ctx.output));
    return this.ordered(top);
  }
}
