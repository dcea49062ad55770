/**
 * Values compared by ratio (times, memory) are compared as logs, where a difference of 0.01 is about 1 %.
 */

/**
 * A series' noise on the log scale is taken to be at least this (1 %): identical values are not infinitely sure, and
 * a change smaller than the noise floor is never many standard errors. The gate's runner shift and the change points
 * both use it.
 */
export const MIN_LOG_SPREAD = 0.01;
