// Compiled by tsc only (make wasm-types): the Node entry's declarations describe a usable API.

import rlmeta, {
  decodeValue, encodeValue, errorCodes, errorKindForKafkaMessage, keyFormat, keyForValue, keyParse,
  metadataPartition, version, InternalError, RlmetaError, TruncatedError, errorClasses,
  type Int64, type KeyFields, type Rlmeta, type Value, type ValueInput,
} from '../../../build/pkg/index.mjs';

const api: Rlmeta = rlmeta;
const bytes: Uint8Array = new Uint8Array([1, 0, 0]);

const value: Value = decodeValue(bytes);
if (value.apiKey === 0) {
  const start: Int64 = value.record.startOffset;
  const epochOffset: string | undefined = value.record.segmentLeaderEpochs[0]?.offset;
  const tagged: number | undefined = value.record.brokerLeaderEpoch;
  void [start, epochOffset, tagged];
} else if (value.apiKey === 2) {
  const name: string = value.record.topicIdPartition.name;
  void name;
}
const again: Uint8Array = encodeValue(value);
const input: ValueInput = {
  apiKey: 2,
  version: 1,
  record: {
    topicIdPartition: { name: 'orders', id: 'ASNFZ4mrze_-3LqYdlQyEA', partition: 0 },
    brokerId: 1, eventTimestampMs: 9223372036854775807n, remotePartitionDeleteState: 0, brokerLeaderEpoch: 5, endOffset: '-1',
  },
};
encodeValue(input);

const key: string = keyFormat({ topicId: 'ASNFZ4mrze_-3LqYdlQyEA', topic: 'orders', partition: 0, endOffset: 10n, brokerLeaderEpoch: 1, update: false });
const fields: KeyFields = keyParse(key);
const end: string = fields.endOffset;
const fromBytes: KeyFields = api.keyParse(new TextEncoder().encode(key));
const derived: string = keyForValue(again);
const partition: number = metadataPartition(fields.topicId, fields.partition, 50);
const code: number | undefined = errorKindForKafkaMessage('Unknown metadata id');
const truncated: number = errorCodes().truncated;
const v: string = version();
void [end, fromBytes, derived, partition, code, truncated, v];

try {
  decodeValue(bytes);
} catch (e) {
  if (e instanceof TruncatedError) {
    const at: number | undefined = e.offset;
    const field: string | undefined = e.field;
    void [at, field, e.code, e.kind, e.detail];
  } else if (e instanceof RlmetaError && !(e instanceof InternalError)) {
    const Class: typeof RlmetaError = errorClasses.invalid_key;
    void Class;
  }
}

// @ts-expect-error the update flag is required
keyFormat({ topicId: 'x', topic: 'y', partition: 0, endOffset: '0', brokerLeaderEpoch: 0 });
// @ts-expect-error bytes only, not an ArrayBuffer
decodeValue(new ArrayBuffer(8));
// @ts-expect-error 64-bit values come out as strings
const wrong: number = fields.endOffset;
void wrong;
// @ts-expect-error no such error kind
errorCodes().no_such_kind;

// Whole files.
import { openSegmentLog, openCheckpoint, KIND, type Columns, type InspectionSummary, type CheckpointInfo } from '../../../build/pkg/index.mjs';
const log = openSegmentLog();
log.addFile('00000000000000000000.log', bytes);
const done: boolean = log.index(1000);
const cols: Columns = log.columns(0, log.rows());
const firstOffset: bigint | undefined = cols.offsets[0];
const isSegment: boolean = cols.kinds[0] === KIND.SEGMENT;
log.summarize();
const summary: InspectionSummary = log.summary();
const lost: number = log.preview({ cleanupPolicy: 'compact', segmentRecords: 1000 }, 1796000000000n).lost.length;
const cp: CheckpointInfo = openCheckpoint(bytes);
void [done, firstOffset, isSegment, summary.level, lost, cp.remoteLogMetadataVersion];
// @ts-expect-error no such cleanup policy
log.preview({ cleanupPolicy: 'shred' }, 0);
