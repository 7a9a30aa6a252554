package io.github.zklock.sample;

import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.servlet.mvc.method.annotation.ResponseEntityExceptionHandler;

import io.github.zklock.InvalidLockPathException;
import io.github.zklock.LockAcquisitionException;
import io.github.zklock.LockException;
import io.github.zklock.LockLostException;
import io.github.zklock.transaction.StaleFencingTokenException;

/**
 * Turns the stock and lock exceptions into RFC 9457 problem details:
 * <ul>
 * <li>{@link SoldOutException}: 409 Conflict, with {@code sku}, {@code requested} and
 * {@code available};</li>
 * <li>{@link UnknownSkuException}: 404 Not Found;</li>
 * <li>{@link LockAcquisitionException}: 423 Locked, with {@code lockPath}, {@code lockMode} and
 * {@code waitTimeMs}: the SKU stayed locked by another caller for the whole wait time, nothing
 * was changed and the request may be retried;</li>
 * <li>{@link InvalidLockPathException}: 400 Bad Request (the SKU cannot name a lock);</li>
 * <li>{@link LockLostException}: 409 Conflict with the header {@value #LOCK_LOST_HEADER}: the
 * write was refused and rolled back because the lock was lost before it could commit; the header
 * says {@code stale-fencing-token} when the store's fence refused the grant's token (a newer grant
 * had written: this instance was a zombie), {@code lost} otherwise (the lock was known to be lost
 * before the write or at commit); nothing was changed and the request may be retried;</li>
 * <li>any other {@link LockException}: 503 Service Unavailable (ZooKeeper unreachable).</li>
 * </ul>
 * Spring MVC's own exceptions (bad parameter, bad body, {@code ResponseStatusException}) are
 * rendered the same way by the {@link ResponseEntityExceptionHandler} base class.
 */
@RestControllerAdvice
public class StockExceptionHandler extends ResponseEntityExceptionHandler {

	/** The header of a 409 answer to a write refused because its lock was lost. */
	public static final String LOCK_LOST_HEADER = "X-Lock-Lost";

	/**
	 * Answer a purchase of more than is in stock.
	 * @param ex the exception
	 * @return a 409 problem
	 */
	@ExceptionHandler
	public ProblemDetail handleSoldOut(SoldOutException ex) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.CONFLICT, ex.getMessage());
		problem.setTitle("Sold out");
		problem.setProperty("sku", ex.getSku());
		problem.setProperty("requested", ex.getRequested());
		problem.setProperty("available", ex.getAvailable());
		return problem;
	}

	/**
	 * Answer a request for a SKU that has no stock row.
	 * @param ex the exception
	 * @return a 404 problem
	 */
	@ExceptionHandler
	public ProblemDetail handleUnknownSku(UnknownSkuException ex) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.NOT_FOUND, ex.getMessage());
		problem.setTitle("Unknown SKU");
		problem.setProperty("sku", ex.getSku());
		return problem;
	}

	/**
	 * Answer a request whose lock was not granted within the wait time.
	 * @param ex the exception
	 * @return a 423 problem
	 */
	@ExceptionHandler
	public ProblemDetail handleLockBusy(LockAcquisitionException ex) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.LOCKED, ex.getMessage());
		problem.setTitle("Lock busy");
		problem.setProperty("lockPath", ex.getPath());
		problem.setProperty("lockMode", ex.getMode());
		problem.setProperty("waitTimeMs", ex.getWaitTime().toMillis());
		return problem;
	}

	/**
	 * Answer a request whose SKU cannot be turned into a lock path.
	 * @param ex the exception
	 * @return a 400 problem
	 */
	@ExceptionHandler
	public ProblemDetail handleInvalidLockPath(InvalidLockPathException ex) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, ex.getMessage());
		problem.setTitle("Invalid lock path");
		return problem;
	}

	/**
	 * Answer a write refused because its lock was lost: by the store's fence (a stale fencing
	 * token) or by the lock's own state.
	 * @param ex the exception
	 * @return a 409 problem with the {@value #LOCK_LOST_HEADER} header
	 */
	@ExceptionHandler
	public ResponseEntity<ProblemDetail> handleLockLost(LockLostException ex) {
		boolean stale = ex instanceof StaleFencingTokenException;
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.CONFLICT, ex.getMessage());
		problem.setTitle(stale ? "Stale fencing token" : "Lock lost");
		problem.setProperty("lockPath", ex.getPath());
		return ResponseEntity.status(HttpStatus.CONFLICT)
			.header(LOCK_LOST_HEADER, stale ? "stale-fencing-token" : "lost")
			.body(problem);
	}

	/**
	 * Answer a request that failed because ZooKeeper could not serve the lock.
	 * @param ex the exception
	 * @return a 503 problem
	 */
	@ExceptionHandler
	public ProblemDetail handleLockFailure(LockException ex) {
		logger.error("Lock failure", ex);
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE, ex.getMessage());
		problem.setTitle("Lock service unavailable");
		return problem;
	}

}
