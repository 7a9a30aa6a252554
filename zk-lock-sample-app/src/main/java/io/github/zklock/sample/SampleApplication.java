package io.github.zklock.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * Entry point of the zk-lock sample: a stock REST service on an in-memory H2 database whose
 * purchases are serialized per SKU by a ZooKeeper lock (an embedded ZooKeeper by default, see
 * {@code application.yml}).
 */
@SpringBootApplication
public class SampleApplication {

	/**
	 * Start the application.
	 * @param args command line arguments, for example {@code --server.port=18080}
	 */
	public static void main(String[] args) {
		SpringApplication.run(SampleApplication.class, args);
	}

}
