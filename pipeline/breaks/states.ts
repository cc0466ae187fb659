/** Break states (CONTRACT §5) and difference dispositions (CONTRACT §7). Published values. */
export const BREAK_STATES = ['OPEN', 'TRIAGED', 'CONTAINED', 'CORRECTED', 'VERIFIED', 'CLOSED'] as const;
export type BreakState = (typeof BREAK_STATES)[number];

export const DISPOSITIONS = ['OPENED', 'REOBSERVED', 'REOPENED', 'TIMING', 'PROVISIONAL'] as const;
export type Disposition = (typeof DISPOSITIONS)[number];

export const CLASSIFICATIONS = ['TIMING', 'DUPLICATE', 'MISSING', 'VALUE', 'EXTERNAL'] as const;
export type Classification = (typeof CLASSIFICATIONS)[number];
