//! The logs of one `eth_simulateV1` call, as go-ethereum's simulator records them
//! (`internal/ethapi/logtracer.go`): every log a frame emits, kept only if that frame and every
//! frame around it did not fail, and with `traceTransfers` each transfer of ether as an ERC-20
//! `Transfer(from, to, value)` log emitted by ERC-7528's
//! `0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE`: the transaction's value, a CALL's (not a
//! DELEGATECALL's or CALLCODE's), a CREATE's, and a SELFDESTRUCT's balance.
//!
//! A log's index counts every log the block's tracer saw, those later dropped with a failed frame
//! included (geth's `tracer.count` is never taken back): the indexes of one block may skip.
//!
//! The callTracer runs inside, top frame only: the call's error in geth's words.

use alloy_primitives::{address, b256, Address, Bytes, B256, U256};
use revm::interpreter::{
    CallInputs, CallOutcome, CallScheme, CreateInputs, CreateOutcome, Interpreter,
};
use revm::primitives::Log;
use revm::{Database, Inspector};

use super::call::{CallTracer, CallTracerConfig};
use super::state::Ctx;

/// ERC-7528's address for ether, the emitter of the synthetic transfer logs.
pub const TRANSFER_ADDRESS: Address = address!("eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee");
/// `keccak256("Transfer(address,address,uint256)")`.
pub const TRANSFER_TOPIC: B256 =
    b256!("ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef");

/// One log as the simulator keeps it: emitter, topics, data, and its index in the block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimLog {
    pub address: Address,
    pub topics: Vec<B256>,
    pub data: Bytes,
    pub index: u64,
}

/// geth's simulator tracer for one transaction of a block, with the callTracer's top frame.
pub struct SimLogTracer {
    transfers: bool,
    /// The logs of each open frame (geth's `logs [][]*types.Log`).
    frames: Vec<Vec<SimLog>>,
    /// The top frame's logs once it ended (empty when it failed).
    done: Option<Vec<SimLog>>,
    /// The next log index of the block.
    count: u64,
    /// Each open CREATE frame's transfer log, by its place in its frame's list, whose recipient
    /// is known only once the frame ends.
    creates: Vec<Option<usize>>,
    /// The fork's own precompile addresses, warmed when a state override changed the block's
    /// set (geth's `StateDB.Prepare` warms `vm.ActivePrecompiles(rules)` whatever the EVM runs).
    warm: Option<&'static revm::primitives::AddressSet>,
    call: CallTracer,
}

impl SimLogTracer {
    /// A tracer for a transaction whose block's tracer has seen `count` logs before it.
    pub fn new(
        transfers: bool,
        count: u64,
        warm: Option<&'static revm::primitives::AddressSet>,
    ) -> Self {
        let config = CallTracerConfig {
            only_top_call: true,
            ..CallTracerConfig::default()
        };
        SimLogTracer {
            transfers,
            frames: Vec::new(),
            done: None,
            count,
            creates: Vec::new(),
            warm,
            call: CallTracer::new(config, 0),
        }
    }

    fn capture(&mut self, address: Address, topics: Vec<B256>, data: Bytes) -> Option<usize> {
        let index = self.count;
        self.count += 1;
        let frame = self.frames.last_mut()?;
        frame.push(SimLog {
            address,
            topics,
            data,
            index,
        });
        Some(frame.len() - 1)
    }

    fn transfer(&mut self, from: Address, to: Address, value: U256) -> Option<usize> {
        if !self.transfers {
            return None;
        }
        let topics = vec![TRANSFER_TOPIC, from.into_word(), to.into_word()];
        let data = Bytes::from(value.to_be_bytes::<32>().to_vec());
        self.capture(TRANSFER_ADDRESS, topics, data)
    }

    /// A frame ended: its logs join its parent's unless it failed; the top frame's are kept,
    /// or dropped when it failed (geth's `onExit`, `onEnd`).
    fn exit(&mut self, failed: bool) {
        let Some(logs) = self.frames.pop() else {
            return;
        };
        match self.frames.last_mut() {
            Some(parent) if !failed => parent.extend(logs),
            Some(_) => {}
            None => self.done = Some(if failed { Vec::new() } else { logs }),
        }
    }

    /// The logs the transaction kept, the block's next log index, and the callTracer's top
    /// frame.
    pub fn finish(self) -> (Vec<SimLog>, u64, CallTracer) {
        (self.done.unwrap_or_default(), self.count, self.call)
    }
}

impl SimLogTracer {
    fn first_frame<DB: Database>(&mut self, ctx: &mut Ctx<DB>) {
        if let Some(warm) = self.warm.filter(|_| self.frames.is_empty()) {
            revm::context_interface::JournalTr::warm_precompiles(&mut ctx.journaled_state, warm);
        }
    }
}

impl super::plain::Plain for SimLogTracer {}

impl<DB: Database> Inspector<Ctx<DB>> for SimLogTracer {
    fn step(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>) {
        self.call.step(interp, ctx)
    }

    fn step_end(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>) {
        self.call.step_end(interp, ctx)
    }

    fn log(&mut self, ctx: &mut Ctx<DB>, log: Log) {
        self.capture(
            log.address,
            log.data.topics().to_vec(),
            log.data.data.clone(),
        );
        Inspector::<Ctx<DB>>::log(&mut self.call, ctx, log)
    }

    fn log_full(&mut self, interp: &mut Interpreter, ctx: &mut Ctx<DB>, log: Log) {
        self.capture(
            log.address,
            log.data.topics().to_vec(),
            log.data.data.clone(),
        );
        self.call.log_full(interp, ctx, log)
    }

    fn call(&mut self, ctx: &mut Ctx<DB>, inputs: &mut CallInputs) -> Option<CallOutcome> {
        self.first_frame(ctx);
        self.frames.push(Vec::new());
        self.creates.push(None);
        let moves = matches!(inputs.scheme, CallScheme::Call | CallScheme::StaticCall);
        if let Some(value) = inputs.value.transfer().filter(|v| moves && !v.is_zero()) {
            self.transfer(inputs.caller, inputs.target_address, value);
        }
        self.call.call(ctx, inputs)
    }

    fn call_end(&mut self, ctx: &mut Ctx<DB>, inputs: &CallInputs, outcome: &mut CallOutcome) {
        self.creates.pop();
        self.exit(!outcome.result.result.is_ok());
        self.call.call_end(ctx, inputs, outcome)
    }

    fn create(&mut self, ctx: &mut Ctx<DB>, inputs: &mut CreateInputs) -> Option<CreateOutcome> {
        self.first_frame(ctx);
        self.frames.push(Vec::new());
        let at = match inputs.value().is_zero() {
            true => None,
            false => self.transfer(inputs.caller(), Address::ZERO, inputs.value()),
        };
        self.creates.push(at);
        self.call.create(ctx, inputs)
    }

    fn create_end(
        &mut self,
        ctx: &mut Ctx<DB>,
        inputs: &CreateInputs,
        outcome: &mut CreateOutcome,
    ) {
        // The created address is the transfer's recipient (geth's `OnEnter` is told it).
        if let (Some(Some(at)), Some(created)) = (self.creates.pop(), outcome.address) {
            if let Some(log) = self.frames.last_mut().and_then(|f| f.get_mut(at)) {
                log.topics[2] = created.into_word();
            }
        }
        self.exit(!outcome.result.result.is_ok());
        self.call.create_end(ctx, inputs, outcome)
    }

    fn selfdestruct(&mut self, contract: Address, target: Address, value: U256) {
        // geth: a SELFDESTRUCT frame entered and left at once, never failed.
        if !value.is_zero() {
            self.transfer(contract, target, value);
        }
    }
}
