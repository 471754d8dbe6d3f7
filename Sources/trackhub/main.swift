print("trackhub")
