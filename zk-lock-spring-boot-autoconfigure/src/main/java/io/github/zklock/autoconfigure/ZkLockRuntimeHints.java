package io.github.zklock.autoconfigure;

import java.util.List;

import org.jspecify.annotations.Nullable;
import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeReference;

/**
 * What zk-lock's client loads by name at run time, for Spring AOT and native images: the ZooKeeper
 * client socket that {@code zk.lock.client-socket} names (ZooKeeper instantiates the class named in
 * its {@code ZKClientConfig} reflectively, through its constructor taking that configuration).
 * Configuration properties and the endpoint's operations get their hints from Spring Boot itself.
 * A native image has not been built here (no GraalVM on the build machine): these hints are what
 * the AOT-processed application on the JVM needs, checked by the tests.
 */
class ZkLockRuntimeHints implements RuntimeHintsRegistrar {

	/** The client sockets {@code zk.lock.client-socket} chooses from. */
	static final List<String> CLIENT_SOCKETS = List.of("org.apache.zookeeper.ClientCnxnSocketNetty",
			"org.apache.zookeeper.ClientCnxnSocketNIO");

	private static final TypeReference CLIENT_CONFIG = TypeReference.of("org.apache.zookeeper.client.ZKClientConfig");

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		for (String socket : CLIENT_SOCKETS) {
			hints.reflection()
				.registerTypeIfPresent(classLoader, socket,
						(type) -> type.withConstructor(List.of(CLIENT_CONFIG), ExecutableMode.INVOKE));
		}
	}

}
