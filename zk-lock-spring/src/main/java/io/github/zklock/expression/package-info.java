/**
 * SpEL lock path templates: parsed once per method, each value encoded into one path segment.
 */
@NullMarked
package io.github.zklock.expression;

import org.jspecify.annotations.NullMarked;
