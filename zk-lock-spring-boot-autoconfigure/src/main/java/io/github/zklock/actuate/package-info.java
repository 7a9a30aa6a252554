/**
 * Operations support: the {@code zkLock} health indicator, the {@code zklocks} endpoint and the
 * lock meters.
 */
@NullMarked
package io.github.zklock.actuate;

import org.jspecify.annotations.NullMarked;
