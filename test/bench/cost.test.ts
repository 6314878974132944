import { describe, expect, it } from 'vitest';
import { billedMs, breakEvenPerMonth, costRow, initMs, managedRow, rightSizedMb, type MixPart } from '../../bench/cost';

/** The cost model of `npm run bench`, checked against sums done by hand from the list prices. */
const part = (over: Partial<MixPart['figures']> = {}): MixPart => ({
  label: 'test',
  share: 1,
  upstreamMs: 1000,
  fn: 'Chat',
  figures: {
    cpuMs: 0,
    dynamoCalls: 0,
    writeUnits: 0,
    readUnits: 0,
    sqsCalls: 0,
    logBytes: 0,
    logLines: 0,
    responseBytes: 0,
    decodedResponseBytes: 0,
    requestBytes: 0,
    ...over,
  },
});

describe('bench cost model', () => {
  it("bills upstream time, our CPU slowed to the memory's vCPU share, and 5 ms per DynamoDB call, rounded up to 1 ms", () => {
    // 2 ms of CPU at 128 MB runs 1769/128 = 13.82× slower: 27.64 ms; one call adds 5 ms.
    expect(billedMs(part({ cpuMs: 2, dynamoCalls: 1 }), 128)).toBe(1033);
    // At or above 1,769 MB the CPU is a full vCPU: no slowdown.
    expect(billedMs(part({ cpuMs: 2 }), 3008)).toBe(1002);
    expect(initMs(100, 442.25)).toBeCloseTo(400, 6);
  });

  it('prices 1M requests: Lambda GB-s and requests, DynamoDB units, CloudFront requests and bytes, log bytes', () => {
    const row = costRow(
      '1024',
      { Chat: 1024, Embeddings: 1024 },
      {
        mix: [part({ writeUnits: 4, readUnits: 2, responseBytes: 1000, decodedResponseBytes: 16_000, requestBytes: 500, logBytes: 400, logLines: 1 })],
        architecture: 'arm64',
        readyMs: 0,
        waf: false,
      },
    );
    expect(row.lambdaGbS).toBeCloseTo(1e6, 0); // 1M × 1 s × 1 GB
    expect(row.lambdaUsd).toBeCloseTo(13.3334 + 0.2, 4);
    expect(row.dynamoUsd).toBeCloseTo(4 * 0.625 + 2 * 0.125, 6);
    // $0.01 per 10,000 requests; 1 GB out at $0.085; 0.5 GB to the origin at $0.02.
    // Bytes out are the bytes on the wire (1,000 gzip), not the decoded 16,000.
    expect(row.cloudfrontUsd).toBeCloseTo(1 + 0.085 + 0.01, 6);
    // 400 bytes + 26 per event, and Lambda's START/END/REPORT lines (270 bytes + 3 × 26): 774 bytes, $0.50/GB.
    expect(row.logsUsd).toBeCloseTo(0.774 * 0.5, 6);
    expect(row.totalUsd).toBeCloseTo(13.5334 + 2.75 + 1.095 + 0.387, 4);
  });

  it('adds INIT for 1% of invocations at the estimated cold start, and WAF when the stack has a web ACL', () => {
    const inputs = { mix: [part()], architecture: 'x86_64' as const, readyMs: 100, waf: true };
    const row = costRow('512', { Chat: 512, Embeddings: 512 }, inputs);
    // 1M × 1 s × 0.5 GB + 1% × 1M × (100 ms × 1769/512) × 0.5 GB, at the x86 price.
    const gbS = 5e5 + 1e4 * 0.3455078125 * 0.5;
    expect(row.lambdaGbS).toBeCloseTo(gbS, 3);
    expect(row.lambdaUsd).toBeCloseTo(gbS * 0.0000166667 + 0.2, 6);
    expect(row.otherUsd).toBeCloseTo(0.6, 6);
  });

  it('right-sizes to the least memory, in 64 MB steps, whose INIT estimate is within 800 ms, plus one step of margin', () => {
    // 200 ms on one vCPU: 1769 × 200 / 800 = 442.25 MB → 448 MB (estimate 789.7 ms), + 64 MB.
    expect(rightSizedMb(200)).toBe(512);
    expect(initMs(200, 448)).toBeLessThanOrEqual(800);
    expect(initMs(200, 448 - 64)).toBeGreaterThan(800);
    expect(rightSizedMb(10)).toBe(128);
    expect(rightSizedMb(400)).toBe(960);
  });

  it('prices Managed Instances per instance-hour at the stated utilisation, with a floor of 3 instances, and finds the break-even', () => {
    // 10 ms of CPU per request and 2-s answers: CPU allows 1000 / 10 = 100/s per 1-vCPU environment, 64 concurrent
    // requests 64 / 2 = 32/s: concurrency limits it. At 50%: 16/s, $0.0725 × 1.15 an hour.
    const inputs = { mix: [part({ cpuMs: 10 })].map((p) => ({ ...p, upstreamMs: 2000 - 10 })), architecture: 'arm64' as const, readyMs: 0, waf: false };
    const managed = managedRow('mi', inputs);
    expect(managed.perInstanceRps).toBeCloseTo(32, 6);
    expect(managed.lambdaUsd).toBeCloseTo(((0.0725 * 1.15) / (16 * 3600)) * 1e6 + 0.2, 6); // no bytes: no NAT GB
    expect(managed.floorUsd).toBeCloseTo((6 * 0.0725 * 1.15 + 3 * 0.045) * 730, 6); // $463.73, as docs/managed-instances.md (a NAT gateway per AZ)
    const lambda = costRow('l', { Chat: 1024, Embeddings: 1024 }, inputs);
    // Break-even: the floor over what per-invocation Lambda's compute costs per request beyond the request fee.
    expect(breakEvenPerMonth(lambda, managed)).toBeCloseTo(managed.floorUsd / ((lambda.lambdaUsd - 0.2) / 1e6), 0);
  });

  it("counts the upstream call's bytes through the NAT gateway: its request and its answer decoded, not the client's gzipped answer", () => {
    const mix = [part({ cpuMs: 10, responseBytes: 2_000, decodedResponseBytes: 90_000, requestBytes: 10_000 })].map((p) => ({ ...p, upstreamMs: 1990 }));
    const managed = managedRow('mi', { mix, architecture: 'arm64', readyMs: 0, waf: false });
    // 1M × 100,000 bytes = 100 GB at $0.045.
    expect(managed.natUsd).toBeCloseTo(4.5, 6);
    expect(managed.lambdaUsd).toBeCloseTo(((0.0725 * 1.15) / (16 * 3600)) * 1e6 + 0.2 + 4.5, 6);
  });
});
