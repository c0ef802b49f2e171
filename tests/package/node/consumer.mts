// Type-checked in the fresh Node project (tsc, moduleResolution nodenext): the "node" condition's
// declarations, reached through the installed package's exports.
import rlmeta, { decodeValue, openSegmentLog, RlmetaError, type Rlmeta, type Value } from 'rlmeta';

const api: Rlmeta = rlmeta;
const value: Value = decodeValue(new Uint8Array([1, 0]));
const rows: number = openSegmentLog().rows();
const isError: boolean = new Error() instanceof RlmetaError;
const version: string = api.version();
void [value, rows, isError, version];
