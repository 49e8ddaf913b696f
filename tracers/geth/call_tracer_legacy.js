// callTracerLegacy — stands for geth's eth/tracers/js/internal/tracers/call_tracer_legacy.js,
// the JavaScript call tracer geth had before its native callTracer.
// Result: the transaction's frame {type, from, to, value, gas, gasUsed, input, output, error,
// calls}, absent keys left out, each sub-call {type, from, to, value, gas, gasUsed, input,
// output, error, calls} built from the opcodes alone:
// - CREATE/CREATE2 and the CALL family open a frame at the opcode (calls to precompiles are
//   skipped); the callee's first step gives its `gas`; the frame closes at the first step back
//   at the caller's depth, where the pushed success flag (or address) decides `output` or the
//   error "internal failure"; gasUsed = gas at the opcode - its cost + gas given - gas left
//   (for creates: gas at the opcode - cost - gas left);
// - SELFDESTRUCT adds a frame with the contract's balance as value;
// - REVERT marks the frame "execution reverted"; a failing opcode (fault) closes the frame
//   with its error and gasUsed = gas.
// chaintrace's own script, written to give geth's result on the same hooks.
{
    stack: [{}],
    entered: false,
    hex: function (n) { return '0x' + bigInt(n).toString(16); },
    addChild: function (frame) {
        var parent = this.stack[this.stack.length - 1];
        if (parent.calls === undefined) {
            parent.calls = [];
        }
        parent.calls.push(frame);
    },
    step: function (log, db) {
        if (log.getError() !== undefined) {
            this.fault(log, db);
            return;
        }
        var code = log.op.toNumber();
        var name = (code & 0xf0) == 0xf0 ? log.op.toString() : undefined;
        var self = log.contract.getAddress();
        if (name == 'CREATE' || name == 'CREATE2') {
            var start = log.stack.peek(1).valueOf();
            this.stack.push({
                type: name,
                from: toHex(self),
                input: toHex(log.memory.slice(start, start + log.stack.peek(2).valueOf())),
                gasIn: log.getGas(),
                gasCost: log.getCost(),
                value: '0x' + log.stack.peek(0).toString(16)
            });
            this.entered = true;
            return;
        }
        if (name == 'SELFDESTRUCT') {
            this.addChild({
                type: name,
                from: toHex(self),
                to: toHex(toAddress(log.stack.peek(0).toString(16))),
                gasIn: log.getGas(),
                gasCost: log.getCost(),
                value: '0x' + db.getBalance(self).toString(16)
            });
            return;
        }
        if (name == 'CALL' || name == 'CALLCODE' || name == 'DELEGATECALL' || name == 'STATICCALL') {
            var target = toAddress(log.stack.peek(1).toString(16));
            if (isPrecompiled(target)) {
                return;
            }
            var valued = name == 'CALL' || name == 'CALLCODE';
            var at = valued ? 3 : 2;
            var inStart = log.stack.peek(at).valueOf();
            var frame = {
                type: name,
                from: toHex(self),
                to: toHex(target),
                input: toHex(log.memory.slice(inStart, inStart + log.stack.peek(at + 1).valueOf())),
                gasIn: log.getGas(),
                gasCost: log.getCost(),
                outOff: log.stack.peek(at + 2).valueOf(),
                outLen: log.stack.peek(at + 3).valueOf()
            };
            if (valued) {
                frame.value = '0x' + log.stack.peek(2).toString(16);
            }
            this.stack.push(frame);
            this.entered = true;
            return;
        }
        if (this.entered) {
            // The callee's first step (or, for a call that ran no code, the caller's next one).
            if (log.getDepth() >= this.stack.length) {
                this.stack[this.stack.length - 1].gas = log.getGas();
            }
            this.entered = false;
        }
        if (name == 'REVERT') {
            this.stack[this.stack.length - 1].error = 'execution reverted';
            return;
        }
        if (log.getDepth() != this.stack.length - 1) {
            return;
        }
        // Back in the caller: the frame on top has ended.
        var done = this.stack.pop();
        var flag = log.stack.peek(0);
        if (done.type == 'CREATE' || done.type == 'CREATE2') {
            done.gasUsed = this.hex(done.gasIn - done.gasCost - log.getGas());
            delete done.gasIn;
            delete done.gasCost;
            if (!flag.equals(0)) {
                done.to = toHex(toAddress(flag.toString(16)));
                done.output = toHex(db.getCode(toAddress(flag.toString(16))));
            } else if (done.error === undefined) {
                done.error = 'internal failure';
            }
        } else {
            if (done.gas !== undefined) {
                done.gasUsed = this.hex(done.gasIn - done.gasCost + done.gas - log.getGas());
            }
            if (!flag.equals(0)) {
                done.output = toHex(log.memory.slice(done.outOff, done.outOff + done.outLen));
            } else if (done.error === undefined) {
                done.error = 'internal failure';
            }
            delete done.gasIn;
            delete done.gasCost;
            delete done.outOff;
            delete done.outLen;
        }
        if (done.gas !== undefined) {
            done.gas = this.hex(done.gas);
        }
        this.addChild(done);
    },
    fault: function (log) {
        if (this.stack[this.stack.length - 1].error !== undefined) {
            return;
        }
        var failed = this.stack.pop();
        failed.error = log.getError();
        if (failed.gas !== undefined) {
            failed.gas = this.hex(failed.gas);
            failed.gasUsed = failed.gas;
        }
        delete failed.gasIn;
        delete failed.gasCost;
        delete failed.outOff;
        delete failed.outLen;
        if (this.stack.length > 0) {
            this.addChild(failed);
        } else {
            this.stack.push(failed);
        }
    },
    ordered: function (f) {
        var keys = ['type', 'from', 'to', 'value', 'gas', 'gasUsed', 'input', 'output', 'error', 'calls'];
        var out = {};
        for (var i = 0; i < keys.length; i++) {
            if (f[keys[i]] !== undefined) {
                out[keys[i]] = f[keys[i]];
            }
        }
        if (out.calls !== undefined) {
            for (var j = 0; j < out.calls.length; j++) {
                out.calls[j] = this.ordered(out.calls[j]);
            }
        }
        return out;
    },
    result: function (ctx) {
        var top = {
            type: ctx.type,
            from: toHex(ctx.from),
            to: toHex(ctx.to),
            value: '0x' + ctx.value.toString(16),
            gas: this.hex(ctx.gas),
            gasUsed: this.hex(ctx.gasUsed),
            input: toHex(ctx.input),
            output: toHex(ctx.output)
        };
        var root = this.stack[0];
        if (root.calls !== undefined) {
            top.calls = root.calls;
        }
        if (root.error !== undefined) {
            top.error = root.error;
        } else if (ctx.error !== undefined) {
            top.error = ctx.error;
        }
        if (top.error !== undefined && (top.error !== 'execution reverted' || top.output === '0x')) {
            delete top.output;
        }
        return this.ordered(top);
    }
}
