/**
 * Spring Boot auto-configuration of zk-lock, bound to {@code zk.lock.*}.
 */
@NullMarked
package io.github.zklock.autoconfigure;

import org.jspecify.annotations.NullMarked;
