/**
 * Auto-configuration of zk-lock's Actuator and Micrometer support; each backs off when its
 * library is absent.
 */
@NullMarked
package io.github.zklock.autoconfigure.actuate;

import org.jspecify.annotations.NullMarked;
