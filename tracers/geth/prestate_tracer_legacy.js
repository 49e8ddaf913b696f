// prestateTracerLegacy — stands for geth's
// eth/tracers/js/internal/tracers/prestate_tracer_legacy.js, the JavaScript prestate tracer
// geth had before its native one.
// Result: {address: {balance, nonce, code, storage}} for the accounts and slots the
// transaction touched, read when first seen. The opcodes that name an account (BALANCE,
// EXTCODE*, the CALL family, CREATE/CREATE2's new address) and the running contract are
// looked up; SLOAD/SSTORE slots of the running contract. At the end the sender's and
// recipient's balances and the sender's nonce are wound back to before the transaction
// (value and gasUsed × gasPrice), and a created contract is left out.
// chaintrace's own script, written to give geth's result on the same hooks.
{
    accounts: null,
    see: function (addr, db) {
        var key = toHex(addr);
        if (this.accounts[key] === undefined) {
            this.accounts[key] = {
                balance: '0x' + db.getBalance(addr).toString(16),
                nonce: db.getNonce(addr),
                code: toHex(db.getCode(addr)),
                storage: {}
            };
        }
    },
    seeSlot: function (addr, slot, db) {
        var storage = this.accounts[toHex(addr)].storage;
        var key = toHex(slot);
        if (storage[key] === undefined) {
            storage[key] = toHex(db.getState(addr, slot));
        }
    },
    step: function (log, db) {
        var self = log.contract.getAddress();
        if (this.accounts === null) {
            this.accounts = {};
            this.see(self, db);
        }
        var name = log.op.toString();
        if (name == 'BALANCE' || name == 'EXTCODESIZE' || name == 'EXTCODECOPY' || name == 'EXTCODEHASH') {
            this.see(toAddress(log.stack.peek(0).toString(16)), db);
        } else if (name == 'CALL' || name == 'CALLCODE' || name == 'DELEGATECALL' || name == 'STATICCALL') {
            this.see(toAddress(log.stack.peek(1).toString(16)), db);
        } else if (name == 'CREATE') {
            this.see(toContract(self, db.getNonce(self)), db);
        } else if (name == 'CREATE2') {
            var start = log.stack.peek(1).valueOf();
            var end = start + log.stack.peek(2).valueOf();
            this.see(toContract2(self, log.stack.peek(3).toString(16), log.memory.slice(start, end)), db);
        } else if (name == 'SLOAD' || name == 'SSTORE') {
            this.seeSlot(self, toWord(log.stack.peek(0).toString(16)), db);
        }
    },
    fault: function () {},
    result: function (ctx, db) {
        if (this.accounts === null) {
            this.accounts = {};
            this.see(ctx.to, db);
        }
        this.see(ctx.from, db);
        var from = this.accounts[toHex(ctx.from)];
        var to = this.accounts[toHex(ctx.to)];
        var fromBalance = bigInt(from.balance.slice(2), 16);
        var toBalance = bigInt(to.balance.slice(2), 16);
        to.balance = '0x' + toBalance.subtract(ctx.value).toString(16);
        from.balance = '0x' + fromBalance.add(ctx.value).add(ctx.gasUsed * ctx.gasPrice).toString(16);
        from.nonce--;
        if (ctx.type == 'CREATE') {
            delete this.accounts[toHex(ctx.to)];
        }
        return this.accounts;
    }
}
