/**
 * Support for testing applications that use zk-lock without installing ZooKeeper: an annotation
 * that runs a Spring test's application context on an in-process server, and a JUnit Jupiter
 * extension that provides one server to a whole test class. Both need
 * {@code org.apache.curator:curator-test} (and JUnit Jupiter, Spring Boot Test) on the test class
 * path.
 */
@NullMarked
package io.github.zklock.testsupport;

import org.jspecify.annotations.NullMarked;
