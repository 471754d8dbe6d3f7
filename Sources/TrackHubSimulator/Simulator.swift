// The courier simulator (trackhub simulate) lives here.
