const t0 = performance.now();
const m = await import('gpt-tokenizer/encoding/o200k_base');
const t1 = performance.now();
console.log('import ms', (t1-t0).toFixed(1));
let s = 'Hello, how are you doing today? '.repeat(30);
let t = performance.now(); let n=0; for (let i=0;i<1000;i++) n+=m.countTokens(s); console.log('1KB x1000 ms', (performance.now()-t).toFixed(1), n/1000, s.length);
for (const len of [10000, 100000, 1000000]) {
  const a = 'a'.repeat(len);
  t = performance.now(); const c = m.countTokens(a); console.log('a*'+len, c, (performance.now()-t).toFixed(1),'ms');
}
const big = 'The quick brown fox jumps over the lazy dog. '.repeat(130000);
t = performance.now(); console.log('6MB english', m.countTokens(big), (performance.now()-t).toFixed(1),'ms');
const rnd = Array.from({length: 1000000}, () => String.fromCharCode(33 + Math.floor(Math.random()*90))).join('');
t = performance.now(); console.log('1MB random', m.countTokens(rnd), (performance.now()-t).toFixed(1),'ms');
