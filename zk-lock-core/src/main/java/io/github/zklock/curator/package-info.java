/**
 * The Curator-backed lock registry: one cached recipe instance per lock path and kind, grants
 * that follow the ZooKeeper connection state, and fencing tokens from znode creation ids.
 */
@NullMarked
package io.github.zklock.curator;

import org.jspecify.annotations.NullMarked;
