// The bounded worker pool lives in core/fs, the floor the overlay and the checkpoints both stand on.
export { forEachLimited } from '../../fs/pool';
