// ERC-20 Transfer extractor.
//
// What: every `Transfer(address,address,uint256)` event (LOG3 with topic0
// 0xddf252ad…) in execution order: token, from, to, amount (decimal string). Events of frames
// that later reverted are dropped, as the chain drops them. ERC-721 transfers (four topics)
// are not included.
// Output: [{"token": "0x…", "from": "0x…", "to": "0x…", "amount": "1000"}, ...]
// Example: chaintrace tx 0x5c50…e1 --json --tracer tracers/erc20_transfers.js
{
  TOPIC: "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
  frames: [[]],
  addr: function (word) {
    var h = word.toString(16);
    while (h.length < 40) { h = "0" + h; }
    return "0x" + h.slice(-40);
  },
  step: function (log, db) {
    if (log.op.toNumber() !== 0xa3 || log.getError() !== undefined) { return; }
    var topic = log.stack.peek(2).toString(16);
    while (topic.length < 64) { topic = "0" + topic; }
    if (topic !== this.TOPIC) { return; }
    var off = log.stack.peek(0).toJSNumber(), size = log.stack.peek(1).toJSNumber();
    if (size !== 32) { return; }
    this.frames[this.frames.length - 1].push({
      token: toHex(log.contract.getAddress()),
      from: this.addr(log.stack.peek(3)),
      to: this.addr(log.stack.peek(4)),
      amount: log.memory.getUint(off).toString()
    });
  },
  enter: function (frame) { this.frames.push([]); },
  exit: function (res) {
    var mine = this.frames.pop();
    if (res.getError() === undefined) {
      var parent = this.frames[this.frames.length - 1];
      for (var i = 0; i < mine.length; i++) { parent.push(mine[i]); }
    }
  },
  fault: function (log, db) {},
  result: function (ctx, db) { return ctx.error === undefined ? this.frames[0] : []; }
}
