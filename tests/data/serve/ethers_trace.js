// An ethers.js client of `chaintrace serve`: debug_traceTransaction through ethers'
// JsonRpcProvider, the way scripts already call a geth node. Prints the result as JSON.
//   node ethers_trace.js URL TXHASH TRACER_CONFIG_JSON
const { JsonRpcProvider } = require("ethers");

async function main() {
  const [url, hash, config] = process.argv.slice(2);
  const provider = new JsonRpcProvider(url, undefined, { staticNetwork: true, batchMaxCount: 1 });
  const result = await provider.send("debug_traceTransaction", [hash, JSON.parse(config)]);
  process.stdout.write(JSON.stringify(result));
  provider.destroy();
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e) + "\n");
  process.exit(1);
});
