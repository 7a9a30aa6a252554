/**
 * A real ZooKeeper for development and tests, without installing one (Curator's in-process
 * {@code TestingServer}): the embedded server of {@code zk.lock.embedded.*} and its
 * auto-configuration, {@link io.github.zklock.test.AutoConfigureEmbeddedZooKeeper} for a Spring
 * test's application context, the JUnit Jupiter {@link io.github.zklock.test.ZooKeeperExtension}
 * that provides one server and its clients to a test class, and
 * {@link io.github.zklock.test.CountingZooKeeper}, a client that counts the requests it sends.
 * Not for production.
 */
@NullMarked
package io.github.zklock.test;

import org.jspecify.annotations.NullMarked;
